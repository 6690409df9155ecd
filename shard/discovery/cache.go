package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// clusterCache is a bounded, least-recently-used cache of per-cluster
// documents. It is safe for concurrent use.
//
// Cache audit (issue 9): cluster-keyed: the key is the logical cluster name.
type clusterCache[T any] struct {
	lru *lru.Cache
}

func newClusterCache[T any](size int) clusterCache[T] {
	return clusterCache[T]{lru: lru.New(size)}
}

func (c clusterCache[T]) get(cluster logicalcluster.Name) (T, bool) {
	v, ok := c.lru.Get(cluster)
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}

func (c clusterCache[T]) add(cluster logicalcluster.Name, v T) { c.lru.Add(cluster, v) }

func (c clusterCache[T]) remove(cluster logicalcluster.Name) { c.lru.Remove(cluster) }

func (c clusterCache[T]) len() int { return c.lru.Len() }

// fingerprint identifies a set of CRDs: it changes whenever one is added,
// removed, recreated or updated (its resourceVersion changes).
func fingerprint(crds []*apiextensionsv1.CustomResourceDefinition) string {
	keys := make([]string, 0, len(crds))
	for _, crd := range crds {
		if crd != nil {
			keys = append(keys, crd.Name+"\x00"+string(crd.UID)+"\x00"+crd.ResourceVersion)
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil))
}
