package discovery

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Defaults of Config.
const (
	// DefaultMaxClusters bounds the clusters whose discovery, OpenAPI v3 and
	// OpenAPI v2 documents are cached.
	DefaultMaxClusters = 512
	// DefaultMaxOpenAPIV2Bytes bounds the bytes the cached OpenAPI v2
	// documents hold together. Unlike discovery and OpenAPI v3, which hold
	// only what a cluster's CRDs add, each OpenAPI v2 document is the whole
	// built-in document with the CRDs merged in, in JSON and, once asked
	// for, protobuf: about 1.4 MB for the shard's built-in APIs (0.75 MB
	// JSON, 0.65 MB protobuf, as TestDiscoveryAdvertisesOnlyWhatIsServed
	// logs), so 32 MiB keeps some 20 clusters' documents, fewer if their
	// CRDs are large. It replaces a bound of 16 clusters that the first
	// shard set as a count standing in for this memory.
	DefaultMaxOpenAPIV2Bytes = 32 << 20
	// DefaultBuiltinRecheckInterval is how long captured built-in documents
	// are used before they are revalidated against the wrapped handler.
	DefaultBuiltinRecheckInterval = 10 * time.Second
)

// CRDLister lists the CustomResourceDefinitions of one logical cluster:
// every CRD the cluster serves, including any synthesized for bound APIs. It
// is called on every discovery and OpenAPI request of the cluster, so it must
// be cheap (an indexed informer cache). The objects must not be mutated
// afterwards: they are kept until the cluster's documents are rebuilt.
type CRDLister func(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error)

// Config configures a Handler.
type Config struct {
	// CRDs lists the CRDs of a logical cluster, and for
	// logicalcluster.Wildcard those served across all clusters (the shard
	// serves one synthetic CRD per name there). Nil means no cluster has
	// any.
	CRDs CRDLister
	// MaxClusters bounds the number of logical clusters whose documents are
	// cached (least recently used first out), discovery and OpenAPI v3 in
	// one cache, OpenAPI v2 in another. Zero means DefaultMaxClusters.
	MaxClusters int
	// MaxOpenAPIV2Bytes bounds the bytes of the cached OpenAPI v2 documents
	// (their JSON and protobuf encodings), least recently used first out; a
	// document larger than that is served but not kept. Zero means
	// DefaultMaxOpenAPIV2Bytes.
	MaxOpenAPIV2Bytes int64
	// Serializer writes legacy discovery documents and errors. Pass the
	// generic server's (genericapiserver.Config.Serializer) so that content
	// negotiation is the built-in endpoints'. Nil means codecs for the
	// meta/v1 discovery types (JSON, YAML, protobuf).
	Serializer runtime.NegotiatedSerializer
	// BuiltinRecheckInterval is how long a captured built-in document is
	// used before it is revalidated (with If-None-Match) against the wrapped
	// handler. Zero means DefaultBuiltinRecheckInterval; negative, never.
	BuiltinRecheckInterval time.Duration
	// Clock tells the time for BuiltinRecheckInterval. Nil means the real
	// clock.
	Clock clock.PassiveClock
}

// Handler serves discovery and OpenAPI per logical cluster and everything
// else through the handler it wraps. Make it with Wrap.
type Handler struct {
	next       http.Handler
	crds       CRDLister
	serializer runtime.NegotiatedSerializer
	aggregated runtime.NegotiatedSerializer
	builtins   *builtins

	docs          clusterCache[*clusterDocs]
	openAPIV2Docs *sizedClusterCache[*openAPIV2Doc]
	openAPIV2Lock sync.Mutex
}

// Wrap returns a handler that answers the discovery (/apis, /apis/<group>,
// /apis/<group>/<version>, legacy and aggregated) and OpenAPI (/openapi/v2,
// /openapi/v3, /openapi/v3/<path>) requests of a logical cluster with the
// built-in documents of next merged with the cluster's CRDs, and passes
// everything else, and requests without a cluster, to next. Requests across
// all clusters (/clusters/*) get the documents of the CRDs Config.CRDs
// returns for logicalcluster.Wildcard.
//
// next must be the generic server's API handler (the handler that
// genericapiserver.Config.BuildHandlerChainFunc receives): the built-in
// documents are captured from it in-process, without going through
// authentication again.
func Wrap(next http.Handler, c Config) *Handler {
	if c.MaxClusters <= 0 {
		c.MaxClusters = DefaultMaxClusters
	}
	if c.MaxOpenAPIV2Bytes <= 0 {
		c.MaxOpenAPIV2Bytes = DefaultMaxOpenAPIV2Bytes
	}
	if c.BuiltinRecheckInterval == 0 {
		c.BuiltinRecheckInterval = DefaultBuiltinRecheckInterval
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Serializer == nil {
		c.Serializer = newLegacyCodecs()
	}
	if c.CRDs == nil {
		c.CRDs = func(logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) { return nil, nil }
	}
	aggregated, err := newAggregatedCodecs()
	if err != nil {
		// The scheme is built from upstream registrations that cannot
		// conflict; failing here is a programming error.
		panic(fmt.Sprintf("building the aggregated discovery scheme: %v", err))
	}
	return &Handler{
		next:          next,
		crds:          c.CRDs,
		serializer:    c.Serializer,
		aggregated:    aggregated,
		builtins:      newBuiltins(next, c.Clock, c.BuiltinRecheckInterval),
		docs:          newClusterCache[*clusterDocs](c.MaxClusters),
		openAPIV2Docs: newSizedClusterCache[*openAPIV2Doc](c.MaxClusters, c.MaxOpenAPIV2Bytes),
	}
}

// Invalidate drops the cached documents of a logical cluster. Call it on
// every change of a CRD in the cluster; documents are also rebuilt when the
// cluster's CRDs no longer match what they were built from, so a late call
// costs memory, never correctness.
func (h *Handler) Invalidate(cluster logicalcluster.Name) {
	h.docs.remove(cluster)
	h.openAPIV2Docs.remove(cluster)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		h.next.ServeHTTP(w, req)
		return
	}
	cluster, ok := logicalcluster.ClusterFrom(req.Context())
	if !ok || (!cluster.Wildcard && cluster.Name.Empty()) {
		h.next.ServeHTTP(w, req)
		return
	}
	name := cluster.Name
	if cluster.Wildcard {
		// Config.CRDs answers for all clusters under this name.
		name = logicalcluster.Wildcard
	}
	r := parsePath(req.URL.Path)
	switch r.kind {
	case coreAPIsPath:
		h.serveCoreAPIs(w, req, name)
	case coreVersionPath:
		h.serveCoreVersion(w, req, name)
	case apisPath:
		h.serveAPIs(w, req, name)
	case groupPath:
		h.serveGroup(w, req, name, r.gv.Group)
	case groupVersionPath:
		h.serveGroupVersion(w, req, name, r.gv)
	case openAPIV2DocPath:
		h.serveOpenAPIV2(w, req, name)
	case openAPIV3RootPath:
		h.serveOpenAPIV3Root(w, req, name)
	case openAPIV3DocPath:
		h.serveOpenAPIV3(w, req, name, r.openAPIV3Path)
	default:
		h.next.ServeHTTP(w, req)
	}
}

// clusterDocs returns the documents of a cluster, or nil when its CRDs serve
// nothing, so that it sees exactly the built-in documents.
func (h *Handler) clusterDocs(ctx context.Context, cluster logicalcluster.Name) (*clusterDocs, error) {
	crds, err := h.crds(cluster)
	if err != nil {
		return nil, fmt.Errorf("listing the CRDs of logical cluster %q: %w", cluster, err)
	}
	if len(crds) == 0 {
		return nil, nil
	}
	builtin, err := h.builtins.apis.get(ctx)
	if err != nil {
		return nil, err
	}
	var core *snapshot[*builtinAPIs]
	if servesCoreGroup(crds) {
		if core, err = h.builtins.core.get(ctx); err != nil {
			return nil, err
		}
	}
	fp := fingerprint(crds)
	d, ok := h.docs.get(cluster)
	if !ok || d.fingerprint != fp || d.builtin != builtin || d.core != core {
		if d, err = newClusterDocs(fp, builtin, core, crds, h.builtinOpenAPIV3); err != nil {
			return nil, fmt.Errorf("building the discovery documents of logical cluster %q: %w", cluster, err)
		}
		h.docs.add(cluster, d)
	}
	if d.apis.empty() {
		return nil, nil
	}
	return d, nil
}
