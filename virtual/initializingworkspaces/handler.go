package initializingworkspaces

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// defaultMaxRequestBodyBytes is the largest status write accepted, as the
// generic API server's default.
const defaultMaxRequestBodyBytes = 3 * 1024 * 1024

// Config configures the virtual workspace handler.
type Config struct {
	// Loopback reaches the shard itself as a member of system:masters. Its
	// Host is the shard's base URL; a trailing /clusters/<name> is ignored.
	Loopback *rest.Config

	// Authorizer decides whether a user may initialize the workspaces of a
	// WorkspaceType: verb "initialize" on workspacetypes.tenancy.kcp.io
	// named like the type, asked with the type's logical cluster in the
	// context (logicalcluster.WithCluster).
	Authorizer authorizer.Authorizer

	// LogicalCluster optionally returns the LogicalCluster of a logical
	// cluster on this shard from a cache, such as the shard's wildcard
	// informer, or an error for which apierrors.IsNotFound holds. The
	// handler uses it to decide whether a logical cluster still waits for
	// an initializer before serving its content. On a miss, and when it is
	// nil, the handler reads the LogicalCluster through Loopback. Status
	// writes always read the live object.
	LogicalCluster func(logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)

	// MaxRequestBodyBytes limits the body of status writes; 0 means 3 MiB.
	MaxRequestBodyBytes int64
}

// handler serves the virtual workspace.
type handler struct {
	// base is the shard's base URL without a trailing slash.
	base      string
	transport http.RoundTripper
	client    *http.Client
	authz     authorizer.Authorizer
	lookup    func(logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	codecs    runtime.NegotiatedSerializer
	maxBody   int64
}

// New returns the handler of the virtual workspace. It serves the paths
// under PathPrefix of requests that are already authenticated (the user is
// in the request context) and authorizes them itself. It starts nothing.
func New(c Config) (http.Handler, error) {
	if c.Loopback == nil {
		return nil, errors.New("initializing workspaces virtual workspace: a loopback configuration is required")
	}
	if c.Authorizer == nil {
		return nil, errors.New("initializing workspaces virtual workspace: an authorizer is required")
	}
	base, transport, err := forward.Shard(c.Loopback)
	if err != nil {
		return nil, fmt.Errorf("initializing workspaces virtual workspace: %w", err)
	}
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := corev1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	h := &handler{
		base:      base,
		transport: transport,
		client:    &http.Client{Transport: transport},
		authz:     c.Authorizer,
		lookup:    c.LogicalCluster,
		codecs:    serializer.NewCodecFactory(scheme).WithoutConversion(),
		maxBody:   c.MaxRequestBodyBytes,
	}
	if h.maxBody <= 0 {
		h.maxBody = defaultMaxRequestBodyBytes
	}
	return h, nil
}

// IsLongRunning tells whether a request to the virtual workspace may stay
// open for long (watches), so that the server's request timeout must not
// cut it. Mount it in the shard's LongRunningFunc.
func IsLongRunning(req *http.Request) bool {
	if !strings.HasPrefix(req.URL.Path, PathPrefix) {
		return false
	}
	if w, err := strconv.ParseBool(req.URL.Query().Get("watch")); err == nil && w {
		return true
	}
	t, err := parsePath(req.URL.EscapedPath())
	if err != nil {
		return false
	}
	return forward.IsLegacyWatch(t.segments)
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	t, err := parsePath(req.URL.EscapedPath())
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	clusterValue := string(t.cluster.Name)
	if t.cluster.Wildcard {
		clusterValue = string(logicalcluster.Wildcard)
	}
	logger := klog.FromContext(req.Context()).WithValues("initializer", t.initializer, "cluster", clusterValue)
	req = req.WithContext(klog.NewContext(req.Context(), logger))

	if err := h.authorize(req.Context(), t.initializer); err != nil {
		h.writeError(w, req, err)
		return
	}
	if t.cluster.Wildcard {
		h.serveWildcard(w, req, t)
		return
	}
	h.serveCluster(w, req, t)
}

// lcPath is a parsed path of the logicalclusters resource:
// /apis/core.kcp.io/v1alpha1/[watch/]logicalclusters[/<name>[/<subresource>]].
type lcPath struct {
	// watch is the legacy watch prefix.
	watch       bool
	name        string
	subresource string
}

const logicalClustersResource = "logicalclusters"

// logicalClustersGR is the resource the virtual workspace serves.
var logicalClustersGR = corev1alpha1.Resource(logicalClustersResource)

// resourcePath is the escaped path of the logicalclusters resource inside
// a logical cluster.
var resourcePath = "/apis/" + corev1alpha1.SchemeGroupVersion.String() + "/" + logicalClustersResource

// parseLCPath tells whether segments address the logicalclusters resource,
// and fails with NotFound for paths below it that do not exist.
func parseLCPath(segments []string) (lcPath, bool, error) {
	gv := corev1alpha1.SchemeGroupVersion
	if len(segments) < 4 || segments[0] != "apis" || segments[1] != gv.Group || segments[2] != gv.Version {
		return lcPath{}, false, nil
	}
	rest := segments[3:]
	var p lcPath
	if rest[0] == "watch" {
		p.watch, rest = true, rest[1:]
	}
	if len(rest) == 0 || rest[0] != logicalClustersResource {
		return lcPath{}, false, nil
	}
	rest = rest[1:]
	switch len(rest) {
	case 0:
	case 1:
		p.name = rest[0]
	case 2:
		if p.watch {
			return lcPath{}, true, errPathNotFound()
		}
		p.name, p.subresource = rest[0], rest[1]
	default:
		return lcPath{}, true, errPathNotFound()
	}
	return p, true, nil
}

// serveWildcard serves /clusters/*: discovery of the virtual workspace and
// list and watch of the LogicalClusters that wait for the initializer.
func (h *handler) serveWildcard(w http.ResponseWriter, req *http.Request, t target) {
	if h.serveDiscovery(w, req, t.segments) {
		return
	}
	if len(t.segments) == 1 && t.segments[0] == "version" {
		h.forward(w, req, "/version", req.URL.RawQuery)
		return
	}
	p, ok, err := parseLCPath(t.segments)
	switch {
	case err != nil:
		h.writeError(w, req, err)
	case !ok:
		h.writeError(w, req, errPathNotFound())
	case p.name != "" && !p.watch:
		h.writeError(w, req, apierrors.NewBadRequest("only list and watch are served across all logical clusters; address one LogicalCluster through /clusters/<name>"))
	case req.Method != http.MethodGet:
		h.writeError(w, req, apierrors.NewMethodNotSupported(logicalClustersGR, verbFor(req.Method)))
	default:
		h.forwardList(w, req, t)
	}
}

// serveCluster serves /clusters/<name>: its LogicalCluster (read and
// status writes) and, while it waits for the initializer, its content.
func (h *handler) serveCluster(w http.ResponseWriter, req *http.Request, t target) {
	p, ok, err := parseLCPath(t.segments)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	if !ok {
		h.serveContent(w, req, t)
		return
	}
	switch {
	case p.name == "" || p.watch:
		if req.Method != http.MethodGet {
			h.writeError(w, req, apierrors.NewMethodNotSupported(logicalClustersGR, verbFor(req.Method)))
			return
		}
		h.forwardList(w, req, t)
	case p.name != corev1alpha1.LogicalClusterName:
		h.writeError(w, req, apierrors.NewNotFound(logicalClustersGR, p.name))
	case p.subresource != "" && p.subresource != "status":
		h.writeError(w, req, errPathNotFound())
	case req.Method == http.MethodGet:
		h.serveGet(w, req, t, p.subresource)
	case p.subresource == "status" && req.Method == http.MethodPut:
		h.writeStatus(w, req, t, statusUpdate)
	case p.subresource == "status" && req.Method == http.MethodPatch:
		h.writeStatus(w, req, t, statusPatch)
	default:
		h.writeError(w, req, apierrors.NewMethodNotSupported(logicalClustersGR, verbFor(req.Method)))
	}
}

// serveGet returns the LogicalCluster (or its status) while it waits for
// the initializer.
func (h *handler) serveGet(w http.ResponseWriter, req *http.Request, t target, subresource string) {
	pending, err := h.pending(req.Context(), t.cluster.Name, t.initializer)
	switch {
	case err != nil:
		h.writeError(w, req, err)
		return
	case !pending:
		h.writeError(w, req, apierrors.NewNotFound(logicalClustersGR, corev1alpha1.LogicalClusterName))
		return
	}
	p := t.clusterPath() + resourcePath + "/" + corev1alpha1.LogicalClusterName
	if subresource != "" {
		p += "/" + subresource
	}
	h.forward(w, req, p, req.URL.RawQuery)
}

// forwardList forwards a list or watch of LogicalClusters, limited by a
// label selector to those that wait for the initializer.
func (h *handler) forwardList(w http.ResponseWriter, req *http.Request, t target) {
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		h.writeError(w, req, apierrors.NewBadRequest(fmt.Sprintf("invalid query: %v", err)))
		return
	}
	sel, err := initializerSelector(q.Get("labelSelector"), t.initializer)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	q.Set("labelSelector", sel)
	h.forward(w, req, t.clusterPath()+t.restPath(), q.Encode())
}

// writeError writes err as a Kubernetes Status in the negotiated format.
func (h *handler) writeError(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, h.codecs, schema.GroupVersion{Version: "v1"}, w, req)
}

// verbFor returns the API verb of an HTTP method, for error messages.
func verbFor(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return strings.ToLower(method)
}

// methodNotAllowed is the Status of a method a path does not serve.
func methodNotAllowed(method string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusMethodNotAllowed,
		Reason:  metav1.StatusReasonMethodNotAllowed,
		Message: fmt.Sprintf("%s is not supported here", method),
	}}
}
