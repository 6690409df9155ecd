package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// clusterDocs are the documents of one logical cluster that has CRDs:
// discovery is computed when it is made, OpenAPI v3 on first use. It is
// immutable apart from the lazily built parts, which have their own locks.
type clusterDocs struct {
	// fingerprint of the CRDs it was built from.
	fingerprint string
	// builtin is the built-in discovery it was merged with.
	builtin *snapshot[*builtinAPIs]
	// core is the built-in discovery of /api it was merged with, nil
	// without CRDs of the core group.
	core *snapshot[*builtinAPIs]
	// apis are the group versions the CRDs add.
	apis crdAPIs

	// aggregated is the merged aggregated discovery document of /apis.
	aggregated apidiscoveryv2.APIGroupDiscoveryList
	// aggregatedETag is its unquoted ETag, computed as upstream does.
	aggregatedETag string
	// coreAggregated is the merged aggregated discovery document of /api,
	// when CRDs add resources to core v1, and coreAggregatedETag its ETag.
	coreAggregated     apidiscoveryv2.APIGroupDiscoveryList
	coreAggregatedETag string

	// openAPIV3 holds a document per CRD group version, by OpenAPI v3 path
	// ("apis/<group>/<version>"), including the built-in group versions
	// that CRDs add resources to.
	openAPIV3 map[string]*openAPIV3Doc

	v3RootLock sync.Mutex
	v3Root     *openAPIV3Root
}

// newClusterDocs computes the discovery of a cluster's CRDs merged with the
// built-in discovery of /apis and, when crds has CRDs of the core group, of
// /api (core, nil otherwise).
func newClusterDocs(fp string, builtin, core *snapshot[*builtinAPIs], crds []*apiextensionsv1.CustomResourceDefinition, builtinV3 builtinOpenAPIV3Func) (*clusterDocs, error) {
	apis := newCRDAPIs(crds, func(gv schema.GroupVersion, resource, kind string) bool {
		if gv.Group == "" {
			return core == nil || core.value.serves(gv, resource, kind)
		}
		return builtin.value.serves(gv, resource, kind)
	})
	d := &clusterDocs{
		fingerprint: fp,
		builtin:     builtin,
		core:        core,
		apis:        apis,
		aggregated:  apidiscoveryv2.APIGroupDiscoveryList{Items: mergeAggregated(builtin.value.list.Items, apis)},
		openAPIV3:   newOpenAPIV3Docs(apis, builtin.value.hasGroupVersion, builtinV3),
	}
	etag, err := aggregatedETag(&d.aggregated)
	if err != nil {
		return nil, err
	}
	d.aggregatedETag = etag
	if apis.core != nil {
		// The core group merges as a built-in group would.
		coreAPIs := crdAPIs{groups: []crdGroup{{name: "", versions: []crdVersion{*apis.core}}}}
		d.coreAggregated = apidiscoveryv2.APIGroupDiscoveryList{Items: mergeAggregated(core.value.list.Items, coreAPIs)}
		if d.coreAggregatedETag, err = aggregatedETag(&d.coreAggregated); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// aggregatedETag hashes an aggregated discovery document the way
// k8s.io/apiserver's discovery manager does.
func aggregatedETag(list *apidiscoveryv2.APIGroupDiscoveryList) (string, error) {
	data, err := json.Marshal(list)
	if err != nil {
		return "", fmt.Errorf("encoding aggregated discovery: %w", err)
	}
	return fmt.Sprintf("%X", sha512.Sum512(data)), nil
}
