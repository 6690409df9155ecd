package discovery

import (
	"context"
	"fmt"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// openAPIV2Path is where the generic server serves OpenAPI v2.
const openAPIV2Path = "/openapi/v2"

// openAPIV2Doc is the merged OpenAPI v2 document of one logical cluster,
// served by kube-openapi's handler (JSON and protobuf, ETag, gzip).
type openAPIV2Doc struct {
	fingerprint string
	builtin     *snapshot[*builtinAPIs]
	static      *snapshot[*spec.Swagger]
	handler     http.Handler
}

// current tells whether the document was built from these inputs.
func (d *openAPIV2Doc) current(docs *clusterDocs, static *snapshot[*spec.Swagger]) bool {
	return d.fingerprint == docs.fingerprint && d.builtin == docs.builtin && d.static == static
}

// openAPIV2 returns the cached document of a cluster, building it when the
// CRDs or the built-in document changed.
func (h *Handler) openAPIV2(ctx context.Context, cluster logicalcluster.Name, docs *clusterDocs) (*openAPIV2Doc, error) {
	static, err := h.builtins.openAPIV2.get(ctx)
	if err != nil {
		return nil, err
	}
	if d, ok := h.openAPIV2Docs.get(cluster); ok && d.current(docs, static) {
		return d, nil
	}
	// Building is expensive and v2 is rarely asked for: build one at a time
	// rather than the same one concurrently.
	h.openAPIV2Lock.Lock()
	defer h.openAPIV2Lock.Unlock()
	if d, ok := h.openAPIV2Docs.get(cluster); ok && d.current(docs, static) {
		return d, nil
	}
	merged, err := buildOpenAPIV2(ctx, static.value, docs.apis)
	if err != nil {
		return nil, err
	}
	var mux pathHandler
	handler.NewOpenAPIService(merged).RegisterOpenAPIVersionedService(openAPIV2Path, &mux)
	d := &openAPIV2Doc{fingerprint: docs.fingerprint, builtin: docs.builtin, static: static, handler: mux.handler}
	h.openAPIV2Docs.add(cluster, d)
	return d, nil
}

// buildOpenAPIV2 merges the CRDs' schemas into the built-in document as
// apiextensions-apiserver's openapi controller does: one spec per CRD over
// its served versions, defaults pruned, the built-in document taking
// precedence. A CRD whose schema cannot be built is left out and logged.
func buildOpenAPIV2(ctx context.Context, static *spec.Swagger, apis crdAPIs) (*spec.Swagger, error) {
	opts := builder.Options{
		V2:                      true,
		IncludeSelectableFields: utilfeature.DefaultFeatureGate.Enabled(apiextensionsfeatures.CustomResourceFieldSelectors),
	}
	// The versions each CRD serves here (built-in group versions excluded),
	// in the order the CRDs were first met: groups and CRDs are sorted.
	type crdVersions struct {
		crd      *apiextensionsv1.CustomResourceDefinition
		versions []string
	}
	var order []*crdVersions
	byName := map[string]*crdVersions{}
	for _, g := range apis.groups {
		for _, v := range g.versions {
			for _, crd := range v.crds {
				cv := byName[crd.Name]
				if cv == nil {
					cv = &crdVersions{crd: crd}
					byName[crd.Name] = cv
					order = append(order, cv)
				}
				cv.versions = append(cv.versions, v.name)
			}
		}
	}

	logger := klog.FromContext(ctx)
	crdSpecs := make([]*spec.Swagger, 0, len(order))
	for _, cv := range order {
		merged := &spec.Swagger{}
		for _, v := range cv.versions {
			s, err := builder.BuildOpenAPIV2(cv.crd, v, opts)
			if err != nil {
				logger.Error(err, "Leaving a CRD version out of OpenAPI v2", "crd", cv.crd.Name, "version", v)
				continue
			}
			s.Definitions = handler.PruneDefaults(s.Definitions)
			if merged, err = builder.MergeSpecs(merged, s); err != nil {
				return nil, fmt.Errorf("merging the OpenAPI v2 schemas of CRD %s: %w", cv.crd.Name, err)
			}
		}
		crdSpecs = append(crdSpecs, merged)
	}
	merged, err := builder.MergeSpecs(static, crdSpecs...)
	if err != nil {
		return nil, fmt.Errorf("merging CRD schemas into the built-in OpenAPI v2 document: %w", err)
	}
	return merged, nil
}

// pathHandler receives the handler kube-openapi registers for a path.
type pathHandler struct {
	handler http.Handler
}

func (m *pathHandler) Handle(_ string, h http.Handler) { m.handler = h }
