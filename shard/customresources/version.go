package customresources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// servingDigest identifies what a serving state is built from: the CRD's
// spec and accepted names.
func servingDigest(crd *apiextensionsv1.CustomResourceDefinition) string {
	data, err := json.Marshal(struct {
		Spec  apiextensionsv1.CustomResourceDefinitionSpec  `json:"spec"`
		Names apiextensionsv1.CustomResourceDefinitionNames `json:"names"`
	}{crd.Spec, crd.Status.AcceptedNames})
	if err != nil {
		// Never for these types; an empty digest serves nothing else.
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// digests remembers the serving digest of the last CRD objects seen, by
// UID and resourceVersion, so a request hashes a CRD's spec at most once
// per resourceVersion.
type digests struct {
	mu   sync.Mutex
	last map[digestKey]string
}

type digestKey struct {
	uid, resourceVersion string
}

// maxDigests bounds the remembered digests; the map is cleared when full.
const maxDigests = 4096

func (d *digests) of(crd *apiextensionsv1.CustomResourceDefinition) string {
	k := digestKey{uid: string(crd.UID), resourceVersion: crd.ResourceVersion}
	d.mu.Lock()
	if v, ok := d.last[k]; ok {
		d.mu.Unlock()
		return v
	}
	d.mu.Unlock()
	v := servingDigest(crd)
	d.mu.Lock()
	if d.last == nil || len(d.last) >= maxDigests {
		d.last = map[digestKey]string{}
	}
	d.last[k] = v
	d.mu.Unlock()
	return v
}

// versionOf returns the version of the serving state of crd in cluster.
func (h *Handler) versionOf(cluster logicalcluster.Name, crd *apiextensionsv1.CustomResourceDefinition) stateVersion {
	return stateVersion{cluster: cluster, uid: crd.UID, resourceVersion: crd.ResourceVersion, digest: h.digests.of(crd)}
}
