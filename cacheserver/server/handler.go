package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// PathPrefix is where the cache server serves its resources.
const PathPrefix = "/services/cache"

// ScopeURL is the path below which shard's and cluster's replicas are
// served, a client-go host path: /services/cache/shards/<shard>/clusters/<cluster>.
func ScopeURL(shard, cluster string) string {
	return PathPrefix + "/shards/" + shard + "/clusters/" + cluster
}

// maxRequestBodyBytes is kube-apiserver's limit.
const maxRequestBodyBytes = 3 * 1024 * 1024

// withScope strips /services/cache/shards/<shard>/clusters/<cluster> from
// the path and puts the shard and cluster in the request context, so the
// rest of the chain (request info, authorization, endpoint handlers) sees a
// normal Kubernetes path. A malformed prefix leaves the path as it is and
// the error in the context: the API handler reports it after
// authentication and authorization.
func withScope(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.Path
		if p != PathPrefix && !strings.HasPrefix(p, PathPrefix+"/") {
			h.ServeHTTP(w, req)
			return
		}
		sc, rest, err := parseScope(p)
		if err != nil {
			h.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), pathErrorKey{}, err)))
			return
		}
		r := req.Clone(replicated.WithScope(req.Context(), sc))
		r.URL.Path = rest
		r.URL.RawPath = ""
		r.RequestURI = rest
		if r.URL.RawQuery != "" {
			r.RequestURI += "?" + r.URL.RawQuery
		}
		h.ServeHTTP(w, r)
	})
}

type pathErrorKey struct{}

// parseScope splits /services/cache/shards/<shard>/clusters/<cluster>/<rest>.
func parseScope(p string) (replicated.Scope, string, error) {
	usage := fmt.Errorf("expected %s/shards/<shard|*>/clusters/<cluster|*>/apis/...", PathPrefix)
	segments := strings.SplitN(strings.TrimPrefix(p, PathPrefix+"/"), "/", 5)
	if len(segments) < 4 || segments[0] != "shards" || segments[2] != "clusters" {
		return replicated.Scope{}, "", apierrors.NewBadRequest(fmt.Sprintf("invalid cache server path %q: %v", p, usage))
	}
	shard, cluster := segments[1], segments[3]
	if !replicated.ValidShard(shard) {
		return replicated.Scope{}, "", apierrors.NewBadRequest(fmt.Sprintf("invalid shard name %q: lower case alphanumeric characters, '-' and ':', at most 61, or *", shard))
	}
	if !replicated.ValidCluster(cluster) {
		return replicated.Scope{}, "", apierrors.NewBadRequest(fmt.Sprintf("invalid logical cluster name %q: %s, or *", cluster, logicalcluster.ValidationMessage))
	}
	rest := "/"
	if len(segments) == 5 {
		rest += segments[4]
	}
	return replicated.Scope{Shard: shard, Cluster: logicalcluster.Name(cluster)}, rest, nil
}

// endpoint is a replicated resource's storage and request scope.
type endpoint struct {
	store *replicated.REST
	scope *handlers.RequestScope
}

// apiHandler serves the replicated resources and their discovery, for the
// requests no route of the generic API server took.
type apiHandler struct {
	codecs            *replicated.Codecs
	resources         []replicated.Resource
	endpoints         map[schema.GroupVersionResource]endpoint
	minRequestTimeout time.Duration
}

func (h *apiHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	if err, ok := ctx.Value(pathErrorKey{}).(error); ok {
		h.fail(w, req, err)
		return
	}
	sc, ok := replicated.ScopeFrom(ctx)
	info, infoOK := request.RequestInfoFrom(ctx)
	if !ok || !infoOK {
		h.fail(w, req, notFound(req.URL.Path))
		return
	}
	if !info.IsResourceRequest {
		h.discovery(w, req, sc)
		return
	}
	gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
	e, ok := h.endpoints[gvr]
	if !ok || info.Namespace != "" || info.Subresource != "" {
		h.fail(w, req, notFound(ScopeURL(sc.Shard, string(sc.Cluster))+req.URL.Path))
		return
	}
	if sc.Wildcard() && info.Verb != "list" && info.Verb != "watch" {
		h.fail(w, req, replicated.WildcardRefusal(gvr.GroupResource(), sc, info.Verb))
		return
	}
	var f http.HandlerFunc
	switch info.Verb {
	case "get":
		f = handlers.GetResource(e.store, e.scope)
	case "list":
		f = handlers.ListResource(e.store, e.store, e.scope, false, h.minRequestTimeout)
	case "watch":
		f = handlers.ListResource(e.store, e.store, e.scope, true, h.minRequestTimeout)
	case "create":
		f = func(w http.ResponseWriter, req *http.Request) { h.create(w, req, e) }
	case "update":
		f = func(w http.ResponseWriter, req *http.Request) { h.update(w, req, e, info.Name) }
	case "delete":
		f = handlers.DeleteResource(e.store, true, e.scope, nil)
	case "deletecollection":
		f = handlers.DeleteCollection(e.store, true, e.scope, nil)
	default:
		h.fail(w, req, apierrors.NewMethodNotSupported(gvr.GroupResource(), info.Verb))
		return
	}
	metrics.InstrumentHandlerFunc(strings.ToUpper(info.Verb), info.APIGroup, info.APIVersion, info.Resource, "",
		metrics.CleanScope(info), metrics.APIServerComponent, false, "", f)(w, req)
}

// create stores the body as written. The stock create handler is not used:
// it resets uid and creationTimestamp and adds managed fields, where a
// replica keeps the owner's.
func (h *apiHandler) create(w http.ResponseWriter, req *http.Request, e endpoint) {
	options := &metav1.CreateOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, options); err != nil {
		h.fail(w, req, apierrors.NewBadRequest(err.Error()))
		return
	}
	if errs := metav1validation.ValidateCreateOptions(options); len(errs) > 0 {
		h.fail(w, req, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "CreateOptions"}, "", errs))
		return
	}
	obj, err := h.decode(req, e)
	if err != nil {
		h.fail(w, req, err)
		return
	}
	out, err := e.store.Create(req.Context(), obj, nil, options)
	if err != nil {
		h.fail(w, req, err)
		return
	}
	h.write(w, req, e, http.StatusCreated, out)
}

// update replaces the replica with the body as written (see create).
func (h *apiHandler) update(w http.ResponseWriter, req *http.Request, e endpoint, name string) {
	options := &metav1.UpdateOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, options); err != nil {
		h.fail(w, req, apierrors.NewBadRequest(err.Error()))
		return
	}
	if errs := metav1validation.ValidateUpdateOptions(options); len(errs) > 0 {
		h.fail(w, req, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "UpdateOptions"}, "", errs))
		return
	}
	obj, err := h.decode(req, e)
	if err != nil {
		h.fail(w, req, err)
		return
	}
	out, _, err := e.store.Update(req.Context(), name, rest.DefaultUpdatedObjectInfo(obj), nil, nil, false, options)
	if err != nil {
		h.fail(w, req, err)
		return
	}
	h.write(w, req, e, http.StatusOK, out)
}

// decode reads a JSON or YAML body into an Unstructured object.
func (h *apiHandler) decode(req *http.Request, e endpoint) (runtime.Object, error) {
	info, err := negotiation.NegotiateInputSerializer(req, false, h.codecs)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRequestBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(body) > maxRequestBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d bytes", maxRequestBodyBytes))
	}
	if len(body) == 0 {
		return nil, apierrors.NewBadRequest("the request has no body")
	}
	obj, _, err := info.Serializer.Decode(body, nil, &unstructured.Unstructured{})
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is not a valid %s object: %v", e.scope.Kind.Kind, err))
	}
	if _, err := meta.Accessor(obj); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is not a valid %s object: %v", e.scope.Kind.Kind, err))
	}
	return obj, nil
}

func (h *apiHandler) write(w http.ResponseWriter, req *http.Request, e endpoint, status int, obj runtime.Object) {
	responsewriters.WriteObjectNegotiated(h.codecs, negotiation.DefaultEndpointRestrictions, e.scope.Kind.GroupVersion(), w, req, status, obj, false)
}

func (h *apiHandler) fail(w http.ResponseWriter, req *http.Request, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		err = apierrors.NewInternalError(err)
	}
	responsewriters.ErrorNegotiated(err, h.codecs, schema.GroupVersion{}, w, req)
}

func notFound(path string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: fmt.Sprintf("the server could not find the requested resource (%s): the cache server serves %s/shards/<shard|*>/clusters/<cluster|*>/apis/<group>/<version>/<resource> for its replicated resources only", path, PathPrefix),
	}}
}

// discovery serves /apis, /apis/<group> and /apis/<group>/<version> of a
// shard's and cluster's scope. Across shards or clusters, the resources
// list the verbs served there: list and watch.
func (h *apiHandler) discovery(w http.ResponseWriter, req *http.Request, sc replicated.Scope) {
	segments := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if segments[0] != "apis" || len(segments) > 3 || req.Method != http.MethodGet {
		h.fail(w, req, notFound(ScopeURL(sc.Shard, string(sc.Cluster))+req.URL.Path))
		return
	}
	var groups []metav1.APIGroup
	for _, r := range h.resources {
		gv := metav1.GroupVersionForDiscovery{GroupVersion: r.GroupVersion().String(), Version: r.Version}
		if n := len(groups); n > 0 && groups[n-1].Name == r.Group {
			if groups[n-1].Versions[len(groups[n-1].Versions)-1] != gv {
				groups[n-1].Versions = append(groups[n-1].Versions, gv)
			}
			continue
		}
		groups = append(groups, metav1.APIGroup{Name: r.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
	}
	verbs := metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "update", "watch"}
	if sc.Wildcard() {
		verbs = metav1.Verbs{"list", "watch"}
	}
	var out runtime.Object
	switch len(segments) {
	case 1:
		if wantsAggregated(req.Header.Get("Accept")) {
			h.aggregatedDiscovery(w, verbs)
			return
		}
		out = &metav1.APIGroupList{Groups: groups}
	case 2:
		for i := range groups {
			if groups[i].Name == segments[1] {
				out = &groups[i]
			}
		}
	case 3:
		gv := schema.GroupVersion{Group: segments[1], Version: segments[2]}
		list := &metav1.APIResourceList{GroupVersion: gv.String(), APIResources: []metav1.APIResource{}}
		for _, r := range h.resources {
			if r.GroupVersion() == gv {
				list.APIResources = append(list.APIResources, metav1.APIResource{
					Name: r.Resource, SingularName: r.Singular, Namespaced: false, Kind: r.Kind, Verbs: verbs,
				})
			}
		}
		if len(list.APIResources) > 0 {
			out = list
		}
	}
	if out == nil {
		h.fail(w, req, notFound(ScopeURL(sc.Shard, string(sc.Cluster))+req.URL.Path))
		return
	}
	responsewriters.WriteObjectNegotiated(h.codecs, negotiation.DefaultEndpointRestrictions, schema.GroupVersion{Version: "v1"}, w, req, http.StatusOK, out, false)
}

// aggregatedContentType is the media type of aggregated discovery, which
// kubectl and client-go ask for first.
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated tells whether an Accept header allows aggregated
// discovery (apidiscovery.k8s.io/v2).
func wantsAggregated(accept string) bool {
	for _, r := range strings.Split(accept, ",") {
		base, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err == nil && base == runtime.ContentTypeJSON && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList" {
			return true
		}
	}
	return false
}

// aggregatedDiscovery serves /apis as one APIGroupDiscoveryList, so that
// a client needs no request per group version.
func (h *apiHandler) aggregatedDiscovery(w http.ResponseWriter, verbs metav1.Verbs) {
	list := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}}
	for _, r := range h.resources {
		if n := len(list.Items); n == 0 || list.Items[n-1].Name != r.Group {
			list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: r.Group}})
		}
		g := &list.Items[len(list.Items)-1]
		if n := len(g.Versions); n == 0 || g.Versions[n-1].Version != r.Version {
			g.Versions = append(g.Versions, apidiscoveryv2.APIVersionDiscovery{Version: r.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent})
		}
		v := &g.Versions[len(g.Versions)-1]
		v.Resources = append(v.Resources, apidiscoveryv2.APIResourceDiscovery{
			Resource:         r.Resource,
			ResponseKind:     &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Scope:            apidiscoveryv2.ScopeCluster,
			SingularResource: r.Singular,
			Verbs:            verbs,
		})
	}
	body, err := json.Marshal(list)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", aggregatedContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
