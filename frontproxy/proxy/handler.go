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
	"time"

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
	// HomeCacheSize and HomeCacheTTL bound the cache of users' home
	// workspace paths; DefaultHomeCacheSize and DefaultHomeCacheTTL when
	// zero.
	HomeCacheSize int
	HomeCacheTTL  time.Duration
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
	homes    *homes
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
	h.homes = newHomes(c.Resolver.RootURL, c.Shards, h.headers, c.HomeCacheSize, c.HomeCacheTTL)
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

	rt, err := h.route(req, u)
	var passOn *passOnError
	switch {
	case errors.As(err, &passOn):
		passOn.write(w)
		return
	case err != nil && errors.Is(err, context.Canceled) && req.Context().Err() != nil:
		// The client went away.
		return
	case err != nil:
		writeError(w, req, err)
		return
	}
	rt.user = u
	h.proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), routeKey{}, rt)))
}

// route finds the backend of a request of u (nil: a bearer token is passed
// on).
func (h *Handler) route(req *http.Request, u user.Info) (*route, error) {
	escaped := req.URL.EscapedPath()
	switch {
	case escaped == "/clusters" || strings.HasPrefix(escaped, "/clusters/"):
		return h.routeCluster(req, u, escaped)
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

// routeCluster resolves /clusters/<path>/<rest>. The path ~ (or ~:<rest>)
// is the home workspace of u, which the root shard names; a GET of the
// Workspace ~ in any workspace goes to the root shard, which serves it.
func (h *Handler) routeCluster(req *http.Request, u user.Info, escaped string) (*route, error) {
	ctx := req.Context()
	segment, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(escaped, "/clusters"), "/"), "/")
	if rest != "" || strings.HasSuffix(escaped, "/") {
		rest = "/" + rest
	}
	path, err := url.PathUnescape(segment)
	below, isHome := "", false
	if err == nil {
		below, isHome = homeSegment(path)
	}
	switch {
	case err == nil && path == string(logicalcluster.Wildcard):
		return nil, apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("wildcard requests across logical clusters (/clusters/*) are served by shards only, not through the front-proxy"))
	case segment == "":
		return nil, apierrors.NewBadRequest("a workspace path is required after /clusters/")
	case err != nil || (isHome && below != "" && !logicalcluster.IsValidPath(below)) || (!isHome && !logicalcluster.IsValidPath(path)):
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid workspace path %q: %s", segment, logicalcluster.ValidationMessage))
	case logicalcluster.Name(path).IsSystem():
		return nil, apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf("%q is a shard-local system logical cluster, not reachable through the front-proxy", path))
	}

	if r, err := url.PathUnescape(rest); err == nil && r == homeObjectSuffix && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
		base, err := url.Parse(h.resolver.RootURL())
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return &route{url: joinURL(base, homeObjectPath), tr: h.shards, headers: h.headers}, nil
	}

	var target resolve.Target
	if isHome {
		target, path, err = h.resolveHome(req, u, below)
	} else {
		target, err = h.resolver.Resolve(ctx, logicalcluster.NewPath(path))
	}
	if err != nil {
		return nil, resolveError(ctx, path, err)
	}
	base, err := url.Parse(target.URL)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &route{shard: target.Shard, url: joinURL(base, "/clusters/"+string(target.Cluster)+rest), tr: h.shards, headers: h.headers}, nil
}

// resolveHome resolves ~:<below> for the client of req, and returns the
// path it stands for. When a cached answer names a home that is not found,
// the root shard is asked again: the home may have been deleted and
// created anew.
func (h *Handler) resolveHome(req *http.Request, u user.Info, below string) (resolve.Target, string, error) {
	ctx := req.Context()
	if hasImpersonation(req) {
		// As the shard answers: whose home would it be?
		return resolve.Target{}, HomeWorkspaceName, apierrors.NewBadRequest("the home workspace ~ cannot be used with impersonation: use its full path")
	}
	fresh := false
	for {
		home, cached, err := h.homes.path(ctx, req, u, fresh)
		if err != nil {
			return resolve.Target{}, HomeWorkspaceName, err
		}
		p := home
		if below != "" {
			p = logicalcluster.NewPath(home.String() + logicalcluster.Separator + below)
		}
		target, err := h.resolver.Resolve(ctx, p)
		if !errors.Is(err, resolve.ErrNotFound) || !cached {
			return target, p.String(), err
		}
		if below != "" {
			if _, err := h.resolver.Resolve(ctx, home); !errors.Is(err, resolve.ErrNotFound) {
				// The home is there, what is below it is not.
				return resolve.Target{}, p.String(), resolve.ErrNotFound
			}
		}
		klog.FromContext(ctx).V(4).Info("The cached home workspace is not found, asking the root shard again", "path", home)
		fresh = true
	}
}

// resolveError is the answer to a client when path cannot be resolved.
func resolveError(ctx context.Context, path string, err error) error {
	var unavailable *resolve.UnavailableError
	var passOn *passOnError
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, resolve.ErrNotFound):
		return apierrors.NewNotFound(schema.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, path)
	case errors.As(err, &unavailable):
		klog.FromContext(ctx).V(2).Info("Resolving a workspace path failed", "path", path, "shard", unavailable.Shard, "err", unavailable.Err)
		return apierrors.NewServiceUnavailable(fmt.Sprintf("workspace %q cannot be reached: shard %q is unavailable", path, unavailable.Shard))
	case errors.As(err, &passOn), errors.As(err, &status), errors.Is(err, context.Canceled):
		// Answers of the root shard about the home, and errors made for
		// the client already.
		return err
	}
	return apierrors.NewInternalError(err)
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
