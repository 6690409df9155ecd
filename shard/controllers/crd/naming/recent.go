package naming

import (
	"strconv"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// recentTTL is how long a write is remembered at most, as upstream's
// mutation cache does: long enough for any informer to catch up.
const recentTTL = time.Minute

// recentWrites remembers the CRDs the controller has written until the
// informer has caught up with them, so that names accepted a moment ago are
// in use for the next CRD of the group even if its cache is behind. It plays
// the role of client-go's MutationCache, which keys objects by
// namespace/name and so cannot tell logical clusters apart.
//
// Cache audit (issue 9): cluster-keyed: entries are keyed cluster|name.
type recentWrites struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[string]recentEntry
}

type recentEntry struct {
	crd     *apiextensionsv1.CustomResourceDefinition
	expires time.Time
}

func newRecentWrites(now func() time.Time) *recentWrites {
	return &recentWrites{now: now, entries: map[string]recentEntry{}}
}

// add remembers crd, as the server returned it after a write in cluster.
func (r *recentWrites) add(cluster logicalcluster.Name, crd *apiextensionsv1.CustomResourceDefinition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for k, e := range r.entries {
		if now.After(e.expires) {
			delete(r.entries, k)
		}
	}
	r.entries[informers.ToKey(cluster, "", crd.Name)] = recentEntry{crd: crd, expires: now.Add(recentTTL)}
}

// newer returns the remembered write of cached's CRD if it is newer than
// cached, and cached otherwise, forgetting writes the cache has caught up
// with.
func (r *recentWrites) newer(cluster logicalcluster.Name, cached *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	key := informers.ToKey(cluster, "", cached.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[key]
	if !ok {
		return cached
	}
	if e.crd.UID == cached.UID && r.now().Before(e.expires) && newerVersion(e.crd.ResourceVersion, cached.ResourceVersion) {
		return e.crd
	}
	delete(r.entries, key)
	return cached
}

// newerVersion tells whether resourceVersion a is newer than b. Both are
// etcd revisions on a shard; anything else is never newer.
func newerVersion(a, b string) bool {
	av, err := strconv.ParseUint(a, 10, 64)
	if err != nil {
		return false
	}
	bv, err := strconv.ParseUint(b, 10, 64)
	if err != nil {
		return false
	}
	return av > bv
}
