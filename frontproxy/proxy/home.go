package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/klog/v2"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// HomeWorkspaceName stands for the caller's home workspace: the path ~ (and
// ~:child below it), and the Workspace ~ in any workspace.
const HomeWorkspaceName = "~"

// DefaultHomeCacheSize and DefaultHomeCacheTTL bound the cache of users'
// home paths.
const (
	DefaultHomeCacheSize = 10000
	DefaultHomeCacheTTL  = time.Minute
)

// homeLookupTimeout bounds a lookup of a home on the root shard, which
// waits up to 30 seconds for a home being created.
const homeLookupTimeout = 40 * time.Second

// homeObjectPath is where the root shard serves the caller's home Workspace.
const homeObjectPath = "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~"

// homeObjectSuffix follows /clusters/<path> in a GET of the Workspace ~.
const homeObjectSuffix = "/apis/tenancy.kcp.io/v1alpha1/workspaces/~"

// maxHomeBody bounds what is read of the root shard's answer.
const maxHomeBody = 1 << 20

// homes finds the paths of users' home workspaces by asking the root shard,
// as the user, for the Workspace ~ (which creates the home on first use),
// and keeps the answers in an LRU bounded by size and TTL.
//
// Cache audit (DESIGN 1.6): an answer is read with the user's own identity
// and keyed by that identity: the user name the proxy asserts, or a SHA-256
// of the bearer token passed on (the proxy does not know whose it is). It
// is only used for requests of the same identity, and it says where the
// home is, not that the user may use it: the home's shard decides that.
// Refusals and errors are not cached.
type homes struct {
	rootURL func() string
	shards  *Transports
	headers IdentityHeaders
	ttl     time.Duration
	cache   *cache.LRUExpireCache

	// inflight are the lookups under way, so that the requests of one
	// identity arriving together (kubectl's discovery) ask once.
	mu       sync.Mutex
	inflight map[homeKey]*homeCall
}

// homeCall is a lookup under way.
type homeCall struct {
	done chan struct{}
	p    logicalcluster.Path
	err  error
}

// homeKey is the identity an answer was read with.
type homeKey struct {
	user  string
	token [sha256.Size]byte
}

func newHomes(rootURL func() string, shards *Transports, headers IdentityHeaders, size int, ttl time.Duration) *homes {
	if size <= 0 {
		size = DefaultHomeCacheSize
	}
	if ttl <= 0 {
		ttl = DefaultHomeCacheTTL
	}
	return &homes{rootURL: rootURL, shards: shards, headers: headers, ttl: ttl, cache: cache.NewLRUExpireCache(size), inflight: map[homeKey]*homeCall{}}
}

// passOnError is an answer of the root shard that goes to the client as
// it is: a refusal, or a Retry-After while the home is being created.
type passOnError struct {
	code   int
	header http.Header
	body   []byte
}

func (e *passOnError) Error() string {
	return fmt.Sprintf("the root shard answered %d for the home workspace", e.code)
}

// write sends the answer to the client.
func (e *passOnError) write(w http.ResponseWriter) {
	for k, vs := range e.header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Connection", "Transfer-Encoding", "Keep-Alive", "Upgrade", "Trailer":
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(e.code)
	_, _ = w.Write(e.body)
}

// homeKeyOf returns the identity of a request: u when the proxy asserts it,
// otherwise the bearer token passed on. ok is false without either.
func homeKeyOf(req *http.Request, u user.Info) (homeKey, string, bool) {
	if u != nil {
		return homeKey{user: u.GetName()}, "", true
	}
	token := bearerToken(req)
	if token == "" {
		return homeKey{}, "", false
	}
	return homeKey{token: sha256.Sum256([]byte(token))}, token, true
}

// path returns the path of the home workspace of the client of req: u, or
// the owner of its bearer token when u is nil; cached tells whether it was
// known already. fresh skips the cache.
func (h *homes) path(ctx context.Context, req *http.Request, u user.Info, fresh bool) (p logicalcluster.Path, cached bool, err error) {
	key, token, ok := homeKeyOf(req, u)
	if !ok {
		return logicalcluster.Path{}, false, apierrors.NewUnauthorized("the home workspace needs an authenticated user")
	}
	if !fresh {
		if v, ok := h.cache.Get(key); ok {
			return v.(logicalcluster.Path), true, nil
		}
	}
	p, err = h.shared(ctx, key, u, token)
	return p, false, err
}

// shared looks the home of key up, or waits for the lookup of key under
// way. The lookup runs in a goroutine of its own that ends with it (within
// homeLookupTimeout), and is not canceled when the client that started it
// goes away, as others may be waiting for it.
func (h *homes) shared(ctx context.Context, key homeKey, u user.Info, token string) (logicalcluster.Path, error) {
	h.mu.Lock()
	c, ok := h.inflight[key]
	if !ok {
		c = &homeCall{done: make(chan struct{})}
		h.inflight[key] = c
		go func() {
			c.p, c.err = h.lookup(context.WithoutCancel(ctx), u, token)
			if c.err == nil {
				h.cache.Add(key, c.p, h.ttl)
			} else {
				// Whatever was cached is wrong or out of date.
				h.cache.Remove(key)
			}
			h.mu.Lock()
			delete(h.inflight, key)
			h.mu.Unlock()
			close(c.done)
		}()
	}
	h.mu.Unlock()
	select {
	case <-c.done:
		return c.p, c.err
	case <-ctx.Done():
		return logicalcluster.Path{}, ctx.Err()
	}
}

// lookup asks the root shard for the home Workspace, as u (asserted in
// identity headers) or with token.
func (h *homes) lookup(ctx context.Context, u user.Info, token string) (logicalcluster.Path, error) {
	ctx, cancel := context.WithTimeout(ctx, homeLookupTimeout)
	defer cancel()
	base, err := url.Parse(h.rootURL())
	if err != nil {
		return logicalcluster.Path{}, apierrors.NewInternalError(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, joinURL(base, homeObjectPath).String(), nil)
	if err != nil {
		return logicalcluster.Path{}, apierrors.NewInternalError(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "tessera-front-proxy")
	if u != nil {
		h.headers.set(req.Header, u)
	} else {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.shards.roundTripper(u != nil, false).RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return logicalcluster.Path{}, err
		}
		klog.FromContext(ctx).V(2).Info("Looking up a home workspace failed", "err", err)
		return logicalcluster.Path{}, apierrors.NewServiceUnavailable("the root shard, which knows home workspaces, is unavailable")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHomeBody))
	if err != nil {
		return logicalcluster.Path{}, apierrors.NewServiceUnavailable("reading the home workspace from the root shard failed")
	}
	if resp.StatusCode != http.StatusOK {
		return logicalcluster.Path{}, &passOnError{code: resp.StatusCode, header: resp.Header.Clone(), body: body}
	}
	var ws tenancyv1alpha1.Workspace
	if err := json.Unmarshal(body, &ws); err != nil {
		return logicalcluster.Path{}, apierrors.NewInternalError(fmt.Errorf("decoding the home workspace: %w", err))
	}
	p, ok := workspacePath(ws.Spec.URL)
	if !ok {
		return logicalcluster.Path{}, apierrors.NewInternalError(fmt.Errorf("the home workspace %q has no workspace URL (%q)", ws.Name, ws.Spec.URL))
	}
	return p, nil
}

// workspacePath returns the workspace path of a Workspace's spec.URL,
// <shard external URL>/clusters/<path>.
func workspacePath(raw string) (logicalcluster.Path, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return logicalcluster.Path{}, false
	}
	const segment = "/clusters/"
	p := strings.TrimSuffix(u.Path, "/")
	i := strings.LastIndex(p, segment)
	if i < 0 {
		return logicalcluster.Path{}, false
	}
	rest := p[i+len(segment):]
	if strings.Contains(rest, "/") || !logicalcluster.IsValidPath(rest) {
		return logicalcluster.Path{}, false
	}
	return logicalcluster.NewPath(rest), true
}

// bearerToken returns the bearer token of req, from its Authorization
// header or its WebSocket subprotocols.
func bearerToken(req *http.Request) string {
	if auth := strings.TrimSpace(req.Header.Get("Authorization")); hasBearerToken(auth) {
		_, token, _ := strings.Cut(auth, " ")
		return strings.TrimSpace(token)
	}
	if !hasWebSocketToken(req) {
		return ""
	}
	for _, v := range req.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if enc, ok := strings.CutPrefix(strings.TrimSpace(p), websocketTokenPrefix); ok {
				if token, err := base64.RawURLEncoding.DecodeString(enc); err == nil {
					return string(token)
				}
			}
		}
	}
	return ""
}

// homeSegment tells whether the workspace path of a request names the
// home: ~ or ~:<rest>, and returns <rest>.
func homeSegment(path string) (rest string, ok bool) {
	if path == HomeWorkspaceName {
		return "", true
	}
	return strings.CutPrefix(path, HomeWorkspaceName+logicalcluster.Separator)
}

// hasImpersonation tells whether req asks to impersonate.
func hasImpersonation(req *http.Request) bool {
	for k := range req.Header {
		if strings.HasPrefix(strings.ToLower(k), "impersonate-") {
			return true
		}
	}
	return false
}
