// Package proxy is the request path of the front-proxy: authenticate the
// client, route /clusters/<path>/... to the shard serving the logical
// cluster, /services/... to virtual workspace backends, and reverse-proxy
// with the user asserted in request headers over mTLS.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/frontproxy/resolve"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Resolver finds the shard and logical cluster of a workspace path.
type Resolver interface {
	Resolve(ctx context.Context, p logicalcluster.Path) (resolve.Target, error)
	RootURL() string
	Synced() bool
}

// Config is what a Handler needs.
type Config struct {
	Resolver Resolver
	// Authentication authenticates clients.
	Authentication *Authentication
	// Shards reach the shards.
	Shards *Transports
	// ShardHeaders are the identity headers shards believe.
	ShardHeaders IdentityHeaders
	// Mappings route /services/ prefixes to other backends.
	Mappings []Mapping
}

// Mapping routes a path prefix to a backend (kcp's --mapping-file entries).
type Mapping struct {
	// Prefix is matched against the request path: the prefix itself or
	// the prefix followed by anything after a '/'.
	Prefix     string
	Backend    *url.URL
	Transports *Transports
	Headers    IdentityHeaders
}

// Handler is the front-proxy's HTTP handler.
type Handler struct {
	resolver Resolver
	authn    *Authentication
	shards   *Transports
	headers  IdentityHeaders
	mappings []Mapping
	proxy    *httputil.ReverseProxy
}

// codecs encode the Status objects of errors.
var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme)
}()

// New returns the Handler.
func New(c Config) *Handler {
	mappings := append([]Mapping(nil), c.Mappings...)
	for i := range mappings {
		mappings[i].Prefix = strings.TrimRight(mappings[i].Prefix, "/")
		mappings[i].Headers = mappings[i].Headers.withDefaults()
	}
	// The longest prefix wins.
	sort.SliceStable(mappings, func(i, j int) bool { return len(mappings[i].Prefix) > len(mappings[j].Prefix) })
	h := &Handler{
		resolver: c.Resolver,
		authn:    c.Authentication,
		shards:   c.Shards,
		headers:  c.ShardHeaders.withDefaults(),
		mappings: mappings,
	}
	h.proxy = &httputil.ReverseProxy{
		Rewrite:       rewrite,
		Transport:     roundTripperFunc(transport),
		FlushInterval: -1,
		ErrorHandler:  h.proxyError,
	}
	return h
}

// route is where a request goes, kept in its context.
type route struct {
	// shard names the shard, for errors; empty for other backends.
	shard   string
	url     *url.URL
	tr      *Transports
	headers IdentityHeaders
	// user is asserted in the headers; nil passes the client's bearer
	// token on for the backend to check.
	user user.Info
}

type routeKey struct{}

func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch p := req.URL.Path; {
	case p == "/healthz" || p == "/livez" || strings.HasPrefix(p, "/healthz/") || strings.HasPrefix(p, "/livez/"):
		writeText(w, http.StatusOK, "ok")
		return
	case p == "/readyz" || strings.HasPrefix(p, "/readyz/"):
		if !h.resolver.Synced() {
			writeText(w, http.StatusServiceUnavailable, "the shards have not been read yet")
			return
		}
		writeText(w, http.StatusOK, "ok")
		return
	}

	u, err := h.authn.authenticate(req)
	if err != nil {
		writeError(w, req, err)
		return
	}

	rt, err := h.route(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	rt.user = u
	h.proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), routeKey{}, rt)))
}

// route finds the backend of a request.
func (h *Handler) route(req *http.Request) (*route, error) {
	escaped := req.URL.EscapedPath()
	switch {
	case escaped == "/clusters" || strings.HasPrefix(escaped, "/clusters/"):
		return h.routeCluster(req.Context(), escaped)
	case escaped == "/services" || strings.HasPrefix(escaped, "/services/"):
		for _, m := range h.mappings {
			if escaped == m.Prefix || strings.HasPrefix(escaped, m.Prefix+"/") {
				return &route{url: joinURL(m.Backend, escaped), tr: m.Transports, headers: m.Headers}, nil
			}
		}
		// Without a mapping, the root shard serves its virtual workspaces.
		base, err := url.Parse(h.resolver.RootURL())
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return &route{url: joinURL(base, escaped), tr: h.shards, headers: h.headers}, nil
	}
	// Everything else (/api, /apis, /version, /openapi/...) is the root
	// logical cluster's.
	base, err := url.Parse(h.resolver.RootURL())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &route{url: joinURL(base, "/clusters/"+string(logicalcluster.Root)+escaped), tr: h.shards, headers: h.headers}, nil
}

// routeCluster resolves /clusters/<path>/<rest>.
func (h *Handler) routeCluster(ctx context.Context, escaped string) (*route, error) {
	segment, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(escaped, "/clusters"), "/"), "/")
	if rest != "" || strings.HasSuffix(escaped, "/") {
		rest = "/" + rest
	}
	path, err := url.PathUnescape(segment)
	switch {
	case err == nil && path == string(logicalcluster.Wildcard):
		return nil, apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("wildcard requests across logical clusters (/clusters/*) are served by shards only, not through the front-proxy"))
	case segment == "":
		return nil, apierrors.NewBadRequest("a workspace path is required after /clusters/")
	case err != nil || !logicalcluster.IsValidPath(path):
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid workspace path %q: %s", segment, logicalcluster.ValidationMessage))
	case logicalcluster.Name(path).IsSystem():
		return nil, apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf("%q is a shard-local system logical cluster, not reachable through the front-proxy", path))
	}
	target, err := h.resolver.Resolve(ctx, logicalcluster.NewPath(path))
	var unavailable *resolve.UnavailableError
	switch {
	case errors.Is(err, resolve.ErrNotFound):
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, path)
	case errors.As(err, &unavailable):
		klog.FromContext(ctx).V(2).Info("Resolving a workspace path failed", "path", path, "shard", unavailable.Shard, "err", unavailable.Err)
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("workspace %q cannot be reached: shard %q is unavailable", path, unavailable.Shard))
	case err != nil:
		return nil, apierrors.NewInternalError(err)
	}
	base, err := url.Parse(target.URL)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &route{shard: target.Shard, url: joinURL(base, "/clusters/"+string(target.Cluster)+rest), tr: h.shards, headers: h.headers}, nil
}

// joinURL returns base with escapedPath appended to its path.
func joinURL(base *url.URL, escapedPath string) *url.URL {
	u := *base
	joined := strings.TrimSuffix(base.EscapedPath(), "/") + escapedPath
	u.RawPath = joined
	if p, err := url.PathUnescape(joined); err == nil {
		u.Path = p
	}
	if u.EscapedPath() == u.Path {
		u.RawPath = ""
	}
	return &u
}

// rewrite turns the client's request into the backend's.
func rewrite(pr *httputil.ProxyRequest) {
	rt := pr.In.Context().Value(routeKey{}).(*route)
	pr.Out.URL.Scheme = rt.url.Scheme
	pr.Out.URL.Host = rt.url.Host
	pr.Out.URL.Path = rt.url.Path
	pr.Out.URL.RawPath = rt.url.RawPath
	pr.Out.Host = ""
	// X-Forwarded-For carries the client's address into the shard's audit
	// log; what the client sent in X-Forwarded-* is replaced.
	pr.SetXForwarded()
	if rt.user != nil {
		rt.headers.set(pr.Out.Header, rt.user)
		// The user is asserted; the client's credentials stay here.
		pr.Out.Header.Del("Authorization")
	} else {
		rt.headers.clear(pr.Out.Header)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// transport sends a request over the transport its route asks for.
func transport(req *http.Request) (*http.Response, error) {
	rt := req.Context().Value(routeKey{}).(*route)
	return rt.tr.roundTripper(rt.user != nil, httpstream.IsUpgradeRequest(req)).RoundTrip(req)
}

// proxyError answers when the backend cannot be reached.
func (h *Handler) proxyError(w http.ResponseWriter, req *http.Request, err error) {
	if errors.Is(err, context.Canceled) && req.Context().Err() != nil {
		// The client went away.
		return
	}
	rt, _ := req.Context().Value(routeKey{}).(*route)
	logger := klog.FromContext(req.Context())
	if rt != nil && rt.shard != "" {
		logger.V(2).Info("Proxying to a shard failed", "shard", rt.shard, "err", err)
		writeError(w, req, apierrors.NewServiceUnavailable(fmt.Sprintf("shard %q is unavailable", rt.shard)))
		return
	}
	logger.V(2).Info("Proxying failed", "err", err)
	writeError(w, req, apierrors.NewServiceUnavailable("the backend of this path is unavailable"))
}

func writeError(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{Version: "v1"}, w, req)
}

func writeText(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
}
