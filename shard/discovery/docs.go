package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// clusterDocs are the documents of one logical cluster that has CRDs:
// discovery is computed when it is made, OpenAPI v3 on first use. It is
// immutable apart from the lazily built parts, which have their own locks.
type clusterDocs struct {
	// fingerprint of the CRDs it was built from.
	fingerprint string
	// builtin is the built-in discovery it was merged with.
	builtin *snapshot[*builtinAPIs]
	// apis are the group versions the CRDs add.
	apis crdAPIs

	// aggregated is the merged aggregated discovery document of /apis.
	aggregated apidiscoveryv2.APIGroupDiscoveryList
	// aggregatedETag is its unquoted ETag, computed as upstream does.
	aggregatedETag string

	// openAPIV3 holds a document per CRD group version, by OpenAPI v3 path
	// ("apis/<group>/<version>"), including the built-in group versions
	// that CRDs add resources to.
	openAPIV3 map[string]*openAPIV3Doc

	v3RootLock sync.Mutex
	v3Root     *openAPIV3Root
}

func newClusterDocs(fp string, builtin *snapshot[*builtinAPIs], crds []*apiextensionsv1.CustomResourceDefinition, builtinV3 builtinOpenAPIV3Func) (*clusterDocs, error) {
	apis := newCRDAPIs(crds, builtin.value.serves)
	d := &clusterDocs{
		fingerprint: fp,
		builtin:     builtin,
		apis:        apis,
		aggregated:  apidiscoveryv2.APIGroupDiscoveryList{Items: mergeAggregated(builtin.value.list.Items, apis)},
		openAPIV3:   newOpenAPIV3Docs(apis, builtin.value.hasGroupVersion, builtinV3),
	}
	etag, err := aggregatedETag(&d.aggregated)
	if err != nil {
		return nil, err
	}
	d.aggregatedETag = etag
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
