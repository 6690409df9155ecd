package apiexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// PathPrefix prefixes every path of the virtual workspace.
const PathPrefix = "/services/apiexport/"

// URLFor returns the path of an export's virtual workspace relative to a
// shard's base URL; clients append /clusters/*.
func URLFor(exportWorkspace, exportName string) string {
	return PathPrefix + exportWorkspace + "/" + url.PathEscape(exportName)
}

// ClusterOf returns the logical cluster a request to the virtual
// workspace addresses, the consumer in its path, or * for all; false if
// the path is not one the virtual workspace serves.
func ClusterOf(req *http.Request) (logicalcluster.Cluster, bool) {
	rest, ok := strings.CutPrefix(req.URL.EscapedPath(), PathPrefix)
	if !ok {
		return logicalcluster.Cluster{}, false
	}
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 4 || parts[2] != "clusters" {
		return logicalcluster.Cluster{}, false
	}
	name, err := url.PathUnescape(parts[3])
	switch {
	case err != nil:
		return logicalcluster.Cluster{}, false
	case name == string(logicalcluster.Wildcard):
		return logicalcluster.Cluster{Wildcard: true}, true
	case logicalcluster.Name(name).IsValid():
		return logicalcluster.Cluster{Name: logicalcluster.Name(name)}, true
	}
	return logicalcluster.Cluster{}, false
}

// Config is what the handler needs.
type Config struct {
	// Shard reaches the shard as its admin (system:masters).
	Shard *rest.Config
	// Exports and Schemas are informers of the shard's APIExports and
	// APIResourceSchemas.
	Exports informers.Informer[*apisv1alpha1.APIExport]
	Schemas informers.Informer[*apisv1alpha1.APIResourceSchema]
	// Bindings is an informer of the shard's APIBindings, for permission
	// claims; without it no claimed resource is served.
	Bindings informers.Informer[*apisv1alpha1.APIBinding]
	// ResolvePath maps a workspace path or logical cluster name to its
	// logical cluster.
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	// Authorizer decides in the logical cluster of its context.
	Authorizer authorizer.Authorizer
}

type handler struct {
	cfg       Config
	discovery builtinDiscovery
	base      string
	transport http.RoundTripper
	codecs    runtime.NegotiatedSerializer
}

// New returns the handler. It serves authenticated requests (the user in
// the request context) under PathPrefix and starts nothing.
func New(c Config) (http.Handler, error) {
	if c.Shard == nil || c.Exports.Informer() == nil || c.Schemas.Informer() == nil || c.ResolvePath == nil || c.Authorizer == nil {
		return nil, errors.New("apiexport virtual workspace: Shard, Exports, Schemas, ResolvePath and Authorizer are required")
	}
	base, transport, err := forward.Shard(c.Shard)
	if err != nil {
		return nil, fmt.Errorf("apiexport virtual workspace: %w", err)
	}
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return &handler{cfg: c, base: base, transport: transport, codecs: serializer.NewCodecFactory(scheme).WithoutConversion()}, nil
}

// target is a parsed request path.
type target struct {
	exportRef string
	export    *apisv1alpha1.APIExport
	cluster   logicalcluster.Cluster
	segments  []string
}

// parse splits an escaped path under PathPrefix.
func (h *handler) parse(escaped string) (target, error) {
	rest, ok := strings.CutPrefix(escaped, PathPrefix)
	if !ok {
		return target{}, forward.ErrPathNotFound()
	}
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 4 || parts[2] != "clusters" {
		return target{}, forward.ErrPathNotFound()
	}
	ref, err1 := url.PathUnescape(parts[0])
	name, err2 := url.PathUnescape(parts[1])
	clusterName, err3 := url.PathUnescape(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || ref == "" || name == "" {
		return target{}, forward.ErrPathNotFound()
	}
	t := target{exportRef: ref}
	switch {
	case clusterName == string(logicalcluster.Wildcard):
		t.cluster = logicalcluster.Cluster{Wildcard: true}
	case logicalcluster.Name(clusterName).IsValid():
		t.cluster = logicalcluster.Cluster{Name: logicalcluster.Name(clusterName)}
	default:
		return target{}, apierrors.NewBadRequest(fmt.Sprintf("invalid logical cluster name %q: %s", clusterName, logicalcluster.ValidationMessage))
	}
	exportCluster, ok := h.cfg.ResolvePath(logicalcluster.NewPath(ref))
	if !ok {
		return target{}, forward.ErrPathNotFound()
	}
	var err error
	t.export, err = h.cfg.Exports.Lister().Cluster(exportCluster).Get(name)
	if err != nil {
		return target{}, forward.ErrPathNotFound()
	}
	if len(parts) == 5 {
		if t.segments, err = forward.Segments(parts[4]); err != nil {
			return target{}, err
		}
	}
	return t, nil
}

// IsLongRunning tells whether a request to the virtual workspace may stay
// open for long (watches). Mount it in the shard's LongRunningFunc.
func IsLongRunning(req *http.Request) bool {
	// <workspace>/<export>/clusters/<name>/...
	return forward.IsLongRunning(req, PathPrefix, 4)
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	t, err := h.parse(req.URL.EscapedPath())
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	logger := klog.FromContext(req.Context()).WithValues("apiexport", logicalcluster.From(t.export).String()+"|"+t.export.Name)
	req = req.WithContext(klog.NewContext(req.Context(), logger))
	r, err := h.classify(req, t)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	if err := h.authorize(req.Context(), t.export, r.verbs...); err != nil {
		h.writeError(w, req, err)
		return
	}
	if r.discovery != nil {
		h.writeJSON(w, r.discovery)
		return
	}
	if r.openAPIV3 != nil {
		h.openAPIV3(w, req, t, r.openAPIV3)
		return
	}
	if r.filter != nil {
		h.forwardFiltered(w, req, r.shardPath, r.filter)
		return
	}
	u, err := url.Parse(h.base + r.shardPath)
	if err != nil {
		h.writeError(w, req, apierrors.NewBadRequest(fmt.Sprintf("invalid path: %v", err)))
		return
	}
	u.RawQuery = req.URL.RawQuery
	forward.Proxy(w, req, h.transport, u, func(err error) {
		logger.Error(err, "Forwarding a request to the shard failed", "path", r.shardPath)
		h.writeError(w, req, err)
	})
}

// routed is what a request turned out to be: a discovery document to
// answer, or a path on the shard to forward to; and the verbs on the
// export's content, one of which the user needs.
type routed struct {
	verbs     []string
	discovery any
	shardPath string
	// filter, when set, passes only the objects of a list or watch it
	// accepts (claimed resources).
	filter func(json.RawMessage) bool
	// openAPIV3, when set, are the segments of an OpenAPI v3 path after
	// /openapi/v3 (empty for the root document).
	openAPIV3 []string
}

// classify routes a request.
func (h *handler) classify(req *http.Request, t target) (routed, error) {
	seg := t.segments
	get := req.Method == http.MethodGet || req.Method == http.MethodHead
	discoveryVerbs := []string{"get", "list", "watch"}
	switch {
	case len(seg) == 1 && seg[0] == "api" && get:
		versions := []string{}
		for _, c := range h.claimedResources(req, t.export) {
			if c.gv.Group == "" {
				versions = []string{"v1"}
			}
		}
		return routed{verbs: discoveryVerbs, discovery: &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: versions}}, nil
	case len(seg) == 2 && seg[0] == "api" && seg[1] == "v1" && get:
		l := h.resourceList(req, t.export, schema.GroupVersion{Version: "v1"})
		if l == nil {
			return routed{}, forward.ErrPathNotFound()
		}
		return routed{verbs: discoveryVerbs, discovery: l}, nil
	case len(seg) == 1 && seg[0] == "apis" && get:
		return routed{verbs: discoveryVerbs, discovery: h.groupList(req, t.export)}, nil
	case len(seg) == 2 && seg[0] == "apis" && get:
		g := h.group(req, t.export, seg[1])
		if g == nil {
			return routed{}, forward.ErrPathNotFound()
		}
		return routed{verbs: discoveryVerbs, discovery: g}, nil
	case len(seg) == 3 && seg[0] == "apis" && get:
		l := h.resourceList(req, t.export, schema.GroupVersion{Group: seg[1], Version: seg[2]})
		if l == nil {
			return routed{}, forward.ErrPathNotFound()
		}
		return routed{verbs: discoveryVerbs, discovery: l}, nil
	case len(seg) > 3 && seg[0] == "apis":
		return h.resourceRequest(req, t, schema.GroupVersion{Group: seg[1], Version: seg[2]}, seg[:3], seg[3:])
	case len(seg) >= 2 && seg[0] == "openapi" && seg[1] == "v3" && get:
		return routed{verbs: discoveryVerbs, openAPIV3: append([]string{}, seg[2:]...)}, nil
	case len(seg) > 2 && seg[0] == "api" && seg[1] == "v1":
		return h.resourceRequest(req, t, schema.GroupVersion{Version: "v1"}, seg[:2], seg[2:])
	}
	return routed{}, forward.ErrPathNotFound()
}

// resourceRequest routes <prefix>/[watch/][namespaces/<ns>/]<resource>[/<name>[/<sub>]],
// where prefix is /apis/<g>/<v> or /api/v1.
func (h *handler) resourceRequest(req *http.Request, t target, gv schema.GroupVersion, prefix, rest []string) (routed, error) {
	prefix = append([]string(nil), prefix...)
	legacyWatch := false
	if rest[0] == "watch" {
		legacyWatch, rest = true, rest[1:]
		prefix = append(prefix, "watch")
	}
	namespace := ""
	if len(rest) >= 3 && rest[0] == "namespaces" {
		namespace = rest[1]
		prefix = append(prefix, "namespaces", rest[1])
		rest = rest[2:]
	}
	if len(rest) == 0 || len(rest) > 3 {
		return routed{}, forward.ErrPathNotFound()
	}
	resource := rest[0]
	if h.exported(t.export, gv, resource) == nil {
		return h.claimedRequest(req, t, gv, prefix, rest, namespace, legacyWatch)
	}
	identity := t.export.Status.IdentityHash
	if identity == "" {
		return routed{}, apierrors.NewServiceUnavailable(fmt.Sprintf("APIExport %s has no identity yet", t.export.Name))
	}
	named := len(rest) >= 2
	verb := verbOf(req, named, legacyWatch)
	if verb == "" {
		return routed{}, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed,
			Reason: metav1.StatusReasonMethodNotAllowed, Message: fmt.Sprintf("%s is not supported here", req.Method)}}
	}
	if t.cluster.Wildcard && verb != "list" && verb != "watch" {
		return routed{}, apierrors.NewMethodNotSupported(schema.GroupResource{Group: gv.Group, Resource: resource}, verb)
	}
	segments := append(prefix, resource+":"+identity)
	segments = append(segments, rest[1:]...)
	clusterSegment := string(logicalcluster.Wildcard)
	if !t.cluster.Wildcard {
		clusterSegment = string(t.cluster.Name)
	}
	return routed{verbs: []string{verb}, shardPath: "/clusters/" + clusterSegment + forward.Join(segments)}, nil
}

// verbOf is the API verb of a resource request.
func verbOf(req *http.Request, named, legacyWatch bool) string {
	return forward.Verb(req, named, legacyWatch)
}

// authorize allows the request if the user may do one of verbs on the
// export's content in the export's logical cluster.
func (h *handler) authorize(ctx context.Context, export *apisv1alpha1.APIExport, verbs ...string) error {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return apierrors.NewUnauthorized("no user")
	}
	exportCtx := logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: logicalcluster.From(export)})
	for _, verb := range verbs {
		attrs := authorizer.AttributesRecord{
			User:            u,
			Verb:            verb,
			APIGroup:        apisv1alpha1.SchemeGroupVersion.Group,
			APIVersion:      apisv1alpha1.SchemeGroupVersion.Version,
			Resource:        "apiexports",
			Subresource:     "content",
			Name:            export.Name,
			ResourceRequest: true,
		}
		d, _, err := h.cfg.Authorizer.Authorize(exportCtx, attrs)
		if err == nil && d == authorizer.DecisionAllow {
			return nil
		}
	}
	return apierrors.NewForbidden(apisv1alpha1.Resource("apiexports/content"), export.Name,
		fmt.Errorf("user %q cannot %s the content of APIExport %s", u.GetName(), strings.Join(verbs, " or "), export.Name))
}

// schemas returns the export's latest schemas that exist.
func (h *handler) schemas(export *apisv1alpha1.APIExport) []*apisv1alpha1.APIResourceSchema {
	var out []*apisv1alpha1.APIResourceSchema
	for _, name := range export.Spec.LatestResourceSchemas {
		s, err := h.cfg.Schemas.Lister().Cluster(logicalcluster.From(export)).Get(name)
		if err == nil {
			out = append(out, s)
		}
	}
	return out
}

// exported returns the schema that serves resource in gv, nil if none.
func (h *handler) exported(export *apisv1alpha1.APIExport, gv schema.GroupVersion, resource string) *apisv1alpha1.APIResourceSchema {
	for _, s := range h.schemas(export) {
		if s.Spec.Group != gv.Group || s.Spec.Names.Plural != resource {
			continue
		}
		for _, v := range s.Spec.Versions {
			if v.Name == gv.Version && v.Served {
				return s
			}
		}
	}
	return nil
}

// versionsOf returns the served versions of each group, newest first.
func (h *handler) versionsOf(req *http.Request, export *apisv1alpha1.APIExport) map[string][]string {
	byGroup := map[string]sets.Set[string]{}
	for _, s := range h.schemas(export) {
		if s.Spec.Group == "" {
			continue // core resources are served under /api
		}
		if byGroup[s.Spec.Group] == nil {
			byGroup[s.Spec.Group] = sets.New[string]()
		}
		for _, v := range s.Spec.Versions {
			if v.Served {
				byGroup[s.Spec.Group].Insert(v.Name)
			}
		}
	}
	for _, c := range h.claimedResources(req, export) {
		if c.gv.Group == "" {
			continue
		}
		if byGroup[c.gv.Group] == nil {
			byGroup[c.gv.Group] = sets.New[string]()
		}
		byGroup[c.gv.Group].Insert(c.gv.Version)
	}
	out := map[string][]string{}
	for g, vs := range byGroup {
		list := sets.List(vs)
		slices.SortFunc(list, func(a, b string) int { return -version.CompareKubeAwareVersionStrings(a, b) })
		out[g] = list
	}
	return out
}

func apiGroup(name string, versions []string) metav1.APIGroup {
	g := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: name}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

func (h *handler) groupList(req *http.Request, export *apisv1alpha1.APIExport) *metav1.APIGroupList {
	l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	byGroup := h.versionsOf(req, export)
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	slices.Sort(names)
	for _, g := range names {
		group := apiGroup(g, byGroup[g])
		group.TypeMeta = metav1.TypeMeta{}
		l.Groups = append(l.Groups, group)
	}
	return l
}

func (h *handler) group(req *http.Request, export *apisv1alpha1.APIExport, name string) *metav1.APIGroup {
	versions, ok := h.versionsOf(req, export)[name]
	if !ok {
		return nil
	}
	g := apiGroup(name, versions)
	return &g
}

func (h *handler) resourceList(req *http.Request, export *apisv1alpha1.APIExport, gv schema.GroupVersion) *metav1.APIResourceList {
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String(), APIResources: []metav1.APIResource{}}
	found := false
	for _, s := range h.schemas(export) {
		if s.Spec.Group != gv.Group {
			continue
		}
		for _, v := range s.Spec.Versions {
			if v.Name != gv.Version || !v.Served {
				continue
			}
			found = true
			n := s.Spec.Names
			namespaced := s.Spec.Scope == "Namespaced"
			l.APIResources = append(l.APIResources, metav1.APIResource{
				Name: n.Plural, SingularName: singular(n.Singular, n.Kind), Namespaced: namespaced, Kind: n.Kind,
				Verbs:      metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
				ShortNames: n.ShortNames, Categories: n.Categories,
			})
			if v.Subresources.Status != nil {
				l.APIResources = append(l.APIResources, metav1.APIResource{Name: n.Plural + "/status", Namespaced: namespaced, Kind: n.Kind,
					Verbs: metav1.Verbs{"get", "patch", "update"}})
			}
			if v.Subresources.Scale != nil {
				l.APIResources = append(l.APIResources, metav1.APIResource{Name: n.Plural + "/scale", Namespaced: namespaced, Group: "autoscaling",
					Version: "v1", Kind: "Scale", Verbs: metav1.Verbs{"get", "patch", "update"}})
			}
		}
	}
	for _, c := range h.claimedResources(req, export) {
		if c.gv == gv {
			found = true
			l.APIResources = append(l.APIResources, c.resource)
		}
	}
	if !found {
		return nil
	}
	return l
}

func singular(s, kind string) string {
	if s != "" {
		return s
	}
	return strings.ToLower(kind)
}

func (h *handler) writeJSON(w http.ResponseWriter, obj any) { forward.WriteJSON(w, http.StatusOK, obj) }

func (h *handler) writeError(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, h.codecs, schema.GroupVersion{Version: "v1"}, w, req)
}
