package customresources

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// identityRE is an APIExport identity hash: a hex SHA-256.
var identityRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Handler serves custom resources of every logical cluster of a shard.
type Handler struct {
	config     Config
	scheme     *runtime.Scheme
	codecs     serializer.CodecFactory
	converters *conversion.CRConverterFactory
	states     *stateCache[*servingState]
	// digests caches servingDigest by CRD UID and resourceVersion.
	// Cache audit (issue 9): cluster-keyed: UIDs are unique across clusters.
	digests digests
	// boundWatches are the open watches of consumers on the shared serving
	// states of bound resources, by consumer cluster and CRD name.
	boundWatches boundWatches
}

// BoundCRDsCluster keys the serving states of resources bound through
// APIExports (CRDs with the annotation apis.kcp.io/identity): a bound
// resource is served alike in every consumer, so all share one state,
// cached under this name and the CRD's name and UID (kcp keeps its bound
// CRDs in a logical cluster of this name).
const BoundCRDsCluster = logicalcluster.Name("system:bound-crds")

// boundWatches registers the watches served from shared states, so that
// Invalidate ends those of one consumer. Entries live as long as a watch.
type boundWatches struct {
	mu      sync.Mutex
	next    uint64
	byOwner map[stateKey]map[uint64]context.CancelFunc
}

// add registers cancel under key and returns its removal.
func (b *boundWatches) add(key stateKey, cancel context.CancelFunc) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byOwner == nil {
		b.byOwner = map[stateKey]map[uint64]context.CancelFunc{}
	}
	b.next++
	id := b.next
	if b.byOwner[key] == nil {
		b.byOwner[key] = map[uint64]context.CancelFunc{}
	}
	b.byOwner[key][id] = cancel
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.byOwner[key], id)
		if len(b.byOwner[key]) == 0 {
			delete(b.byOwner, key)
		}
	}
}

// end cancels the watches registered under key.
func (b *boundWatches) end(key stateKey) {
	b.mu.Lock()
	cancels := make([]context.CancelFunc, 0, len(b.byOwner[key]))
	for _, c := range b.byOwner[key] {
		cancels = append(cancels, c)
	}
	b.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

var _ http.Handler = &Handler{}

// New returns a Handler. It starts nothing; see Run.
func New(c Config) (*Handler, error) {
	c, err := c.complete()
	if err != nil {
		return nil, fmt.Errorf("invalid custom resource handler configuration: %w", err)
	}
	// Webhook conversion is refused before the factory is asked, so it needs
	// no service or authentication resolver.
	converters, err := conversion.NewCRConverterFactory(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating the custom resource converter factory: %w", err)
	}
	scheme := newScheme()
	return &Handler{
		config:     c,
		scheme:     scheme,
		codecs:     serializer.NewCodecFactory(scheme),
		converters: converters,
		states:     newStateCache[*servingState](c.MaxEntries, c.IdleTimeout, time.Now),
	}, nil
}

// Invalidate drops the cached serving state of a CRD in a logical cluster,
// and the wildcard serving state of its name if the CRDs of that name (as
// Config.CRDsNamed returns them now) no longer make it. Call it from a CRD
// informer on add, update and delete; the next request rebuilds the state.
// Watches served from a dropped state end.
func (h *Handler) Invalidate(cluster logicalcluster.Name, crdName string) {
	h.states.invalidateKey(stateKey{cluster: cluster, crd: crdName}, nil)
	h.boundWatches.end(stateKey{cluster: cluster, crd: crdName})
	h.refreshWildcard(crdName)
}

// Update drops the serving state of crd in cluster unless only its status
// changed in a way that serves the same (conditions, stored versions): the
// state's watches then go on. Call it from a CRD informer on update.
func (h *Handler) Update(cluster logicalcluster.Name, crd *apiextensionsv1.CustomResourceDefinition) {
	h.states.update(stateKey{cluster: cluster, crd: crd.Name}, h.versionOf(cluster, crd))
	h.refreshWildcard(crd.Name)
}

// Run releases idle serving state periodically until ctx is done, then
// releases all of it. It is optional: without it, idle state is released
// lazily by later requests.
func (h *Handler) Run(ctx context.Context) {
	ticker := time.NewTicker(h.states.sweepInterval())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			h.Destroy()
			return
		case <-ticker.C:
			h.states.sweep()
		}
	}
}

// Destroy releases all serving state: watches end, and stores are
// destroyed when their last request returns. Later requests build new
// state.
func (h *Handler) Destroy() {
	h.states.close()
}

// ServeHTTP serves a custom resource request, or hands it to
// Config.NotFound when no CRD serves it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if audit.AuditContextFrom(req.Context()) == nil {
		// The endpoint handlers record patches and the like in the audit
		// context, which the server chain normally sets up.
		req = req.WithContext(audit.WithAuditContext(req.Context()))
	}
	ctx := req.Context()
	info, ok := request.RequestInfoFrom(ctx)
	if !ok {
		h.fail(w, req, schema.GroupVersion{}, apierrors.NewInternalError(errors.New("no RequestInfo in the request context")))
		return
	}
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	if !info.IsResourceRequest || !ServesPath(info) {
		h.notFound(w, req, info)
		return
	}
	cluster, ok := logicalcluster.ClusterFrom(ctx)
	if !ok {
		h.fail(w, req, gv, apierrors.NewInternalError(errors.New("no logical cluster in the request context")))
		return
	}
	// <resource>:<identity> addresses the objects of a resource bound
	// through the APIExport of that identity, and nothing else.
	resource, identity, qualified := strings.Cut(info.Resource, ":")
	if qualified {
		if !identityRE.MatchString(identity) {
			h.notFound(w, req, info)
			return
		}
		plain := *info
		plain.Resource = resource
		info = &plain
		req = req.WithContext(request.WithRequestInfo(ctx, info))
		ctx = req.Context()
	}
	logger := klog.FromContext(ctx).WithValues("cluster", clusterName(cluster), "group", info.APIGroup, "resource", info.Resource)
	if cluster.Wildcard && qualified {
		if err := checkWildcard(info); err != nil {
			h.fail(w, req, gv, err)
			return
		}
		h.serveIdentityWildcard(w, req, logger, info, identity)
		return
	}
	if cluster.Wildcard {
		if err := checkWildcard(info); err != nil {
			h.fail(w, req, gv, err)
			return
		}
		h.serveWildcard(w, req, logger, info)
		return
	}

	crd, err := h.config.CRDs(cluster.Name, info.APIGroup, info.Resource)
	if apierrors.IsNotFound(err) {
		h.notFound(w, req, info)
		return
	}
	if err != nil {
		logger.Error(err, "Cannot look up the CustomResourceDefinition")
		h.fail(w, req, gv, apierrors.NewInternalError(fmt.Errorf("cannot look up the CustomResourceDefinition of %s: %w", schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, err)))
		return
	}
	if !servable(crd, info) || (qualified && crd.Annotations[apisv1alpha1.AnnotationAPIIdentityKey] != identity) {
		h.notFound(w, req, info)
		return
	}
	if webhookConversion(crd) {
		h.fail(w, req, gv, errWebhookConversionStatus(crd))
		return
	}
	terminating := crd.DeletionTimestamp != nil || apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating)
	key := stateKey{cluster: cluster.Name, crd: crd.Name}
	version := h.versionOf(cluster.Name, crd)
	if crd.Annotations[apisv1alpha1.AnnotationAPIIdentityKey] != "" {
		// A resource bound through an APIExport is served the same way in
		// every consumer: one serving state for all of them.
		key = stateKey{cluster: BoundCRDsCluster, crd: crd.Name + "|" + string(crd.UID)}
		version = h.versionOf(BoundCRDsCluster, crd)
	}
	h.serve(w, req, logger, info, key, version, crd, terminating)
}

// serve serves a request with the serving state of crd, cached under key
// and built from version, building it if needed.
func (h *Handler) serve(w http.ResponseWriter, req *http.Request, logger klog.Logger, info *request.RequestInfo,
	key stateKey, version stateVersion, crd *apiextensionsv1.CustomResourceDefinition, terminating bool) {
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	state, release, err := h.states.acquire(key, version, func() (*servingState, error) {
		return h.buildState(logger, crd)
	})
	if err != nil {
		logger.Error(err, "Cannot serve the custom resources of a CustomResourceDefinition", "crd", crd.Name)
		h.fail(w, req, gv, servingError(crd, err))
		return
	}
	defer release()
	// The state may come from a later resourceVersion of the CRD that no
	// longer serves the version.
	vs := state.versions[info.APIVersion]
	if vs == nil {
		h.notFound(w, req, info)
		return
	}
	handler, err := h.endpoint(info, vs, terminating)
	if err != nil {
		h.fail(w, req, gv, err)
		return
	}
	for _, msg := range vs.warnings {
		warning.AddWarning(req.Context(), "", msg)
	}
	if info.Verb == "watch" {
		// End the watch when the state leaves the cache, before its stores
		// are destroyed.
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		defer context.AfterFunc(state.ctx, cancel)()
		if key.cluster == BoundCRDsCluster {
			// The state outlives one consumer's binding: end the watch
			// when Invalidate names the consumer's resource.
			if cluster, ok := logicalcluster.ClusterFrom(req.Context()); ok && !cluster.Wildcard {
				defer h.boundWatches.add(stateKey{cluster: cluster.Name, crd: crd.Name}, cancel)()
			}
		}
		req = req.WithContext(ctx)
	}
	handler.ServeHTTP(w, req)
}

// servingError is what a client sees when a CRD's serving state cannot be
// built.
func servingError(crd *apiextensionsv1.CustomResourceDefinition, err error) error {
	if errors.Is(err, errWebhookConversion) {
		return errWebhookConversionStatus(crd)
	}
	return apierrors.NewInternalError(fmt.Errorf("CustomResourceDefinition %s cannot be served: %w", crd.Name, err))
}

// ServesPath tells whether a resource request addresses what a CRD
// can serve: a named group below /apis, or the core group's version v1
// below /api, as kcp serves the core resources of its compute APIExport
// (Services, Pods, Endpoints) in workspaces that bind it.
func ServesPath(info *request.RequestInfo) bool {
	switch info.APIPrefix {
	case "apis":
		return info.APIGroup != ""
	case "api":
		return info.APIGroup == "" && info.APIVersion == "v1"
	}
	return false
}

// notFound hands the request to Config.NotFound, or answers with a
// NotFound Status.
func (h *Handler) notFound(w http.ResponseWriter, req *http.Request, info *request.RequestInfo) {
	if h.config.NotFound != nil {
		h.config.NotFound.ServeHTTP(w, req)
		return
	}
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	if !info.IsResourceRequest {
		h.fail(w, req, gv, apierrors.NewGenericServerResponse(http.StatusNotFound, info.Verb, schema.GroupResource{}, "", "", 0, false))
		return
	}
	h.fail(w, req, gv, apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name))
}

// fail writes err as a Status.
func (h *Handler) fail(w http.ResponseWriter, req *http.Request, gv schema.GroupVersion, err error) {
	responsewriters.ErrorNegotiated(err, h.codecs, gv, w, req)
}

func clusterName(c logicalcluster.Cluster) logicalcluster.Name {
	if c.Wildcard {
		return logicalcluster.Wildcard
	}
	return c.Name
}
