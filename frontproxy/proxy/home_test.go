package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/frontproxy/resolve"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// homeShard stands in for the root shard: it answers the Workspace ~ of
// the user in the identity headers (or of the bearer token "token-<user>")
// and echoes every other request as a seen.
type homeShard struct {
	mu      sync.Mutex
	lookups map[string]int
	// answers are the home paths answered to a user in turn; the last
	// one is repeated. Users without answers get <prefix>:<user>.
	answers map[string][]string
}

const homePrefix = "root:users:ab:cd"

func (s *homeShard) count(u string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups[u]
}

func (s *homeShard) serve(t *testing.T, serving, clients *ca) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != homeObjectPath {
			_ = json.NewEncoder(w).Encode(seen{Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, User: r.Header.Get("X-Remote-User"), Authorization: r.Header.Get("Authorization")})
			return
		}
		u := r.Header.Get("X-Remote-User")
		if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer token-"); ok && u == "" {
			u = token
		}
		s.mu.Lock()
		s.lookups[u]++
		n := s.lookups[u]
		answers := s.answers[u]
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch u {
		case "":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`)
			return
		case "carol":
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"user \"carol\" has no home workspace: home workspaces are for members of [home-owners]","reason":"Forbidden","code":403}`)
			return
		case "busy":
			time.Sleep(300 * time.Millisecond)
		case "slow":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`)
			return
		}
		p := homePrefix + ":" + u
		if len(answers) > 0 {
			p = answers[min(n, len(answers))-1]
		}
		fmt.Fprintf(w, `{"apiVersion":"tenancy.kcp.io/v1alpha1","kind":"Workspace","metadata":{"name":%q},"spec":{"URL":"https://external.example/clusters/%s"},"status":{"phase":"Ready"}}`, u, p)
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{serving.issue(t, "backend", nil, x509.ExtKeyUsageServerAuth)},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    clients.pool(),
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestHome(t *testing.T) {
	serving, users, proxyClients := newCA(t, "serving"), newCA(t, "users"), newCA(t, "proxy-clients")
	shard := &homeShard{lookups: map[string]int{}, answers: map[string][]string{"erin": {homePrefix + ":erin-old", homePrefix + ":erin"}}}
	root := shard.serve(t, serving, proxyClients)
	certFile, keyFile := writeFiles(t, proxyClients.issue(t, "front-proxy", nil, x509.ExtKeyUsageClientAuth))
	shards, err := NewTransports(writeCA(t, serving), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	at := func(cluster logicalcluster.Name) resolve.Target {
		return resolve.Target{Shard: "one", URL: root.URL, Cluster: cluster}
	}
	resolver := &goneResolver{gone: map[string]bool{}, fakeResolver: &fakeResolver{root: root.URL, targets: map[string]resolve.Target{
		"root:org":                   at("org"),
		homePrefix + ":alice":        at("home-alice"),
		homePrefix + ":alice:child":  at("alice-child"),
		homePrefix + ":dave":         at("home-dave"),
		homePrefix + ":erin":         at("home-erin"),
		homePrefix + ":alice:a:b:cd": at("alice-deep"),
		homePrefix + ":erin-old":     at("home-erin-old"),
	}}}
	h := New(Config{
		Resolver: resolver,
		Authentication: &Authentication{
			Certificates: x509request.New(x509.VerifyOptions{Roots: users.pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, x509request.CommonNameUserConversion),
		},
		Shards: shards,
	})
	front := httptest.NewUnstartedServer(h)
	front.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, Certificates: []tls.Certificate{serving.issue(t, "front", nil, x509.ExtKeyUsageServerAuth)}}
	front.StartTLS()
	t.Cleanup(front.Close)
	f := &fixture{proxyURL: front.URL, users: users, serving: serving}
	client := func(name string) *http.Client {
		cert := users.issue(t, name, nil, x509.ExtKeyUsageClientAuth)
		return f.client(t, &cert, true)
	}
	alice := client("alice")

	tests := []struct {
		name    string
		client  *http.Client
		path    string
		headers http.Header
		code    int
		want    string
	}{
		{name: "~ is the home", client: alice, path: "/clusters/~/api/v1/configmaps?limit=1", code: http.StatusOK, want: "/clusters/home-alice/api/v1/configmaps"},
		{name: "~ alone", client: alice, path: "/clusters/~", code: http.StatusOK, want: "/clusters/home-alice"},
		{name: "an escaped ~", client: alice, path: "/clusters/%7E/api", code: http.StatusOK, want: "/clusters/home-alice/api"},
		{name: "a child of the home", client: alice, path: "/clusters/~:child/api", code: http.StatusOK, want: "/clusters/alice-child/api"},
		{name: "a deeper path below the home", client: alice, path: "/clusters/~:a:b:cd/api", code: http.StatusOK, want: "/clusters/alice-deep/api"},
		{name: "a child that does not exist", client: alice, path: "/clusters/~:nope/api", code: http.StatusNotFound},
		{name: "an invalid path below the home", client: alice, path: "/clusters/~:Nope/api", code: http.StatusBadRequest},
		{name: "impersonation with ~", client: alice, path: "/clusters/~/api", headers: http.Header{"Impersonate-User": {"bob"}}, code: http.StatusBadRequest, want: "impersonation"},
		{name: "a user without a home gets the shard's 403", client: client("carol"), path: "/clusters/~/api", code: http.StatusForbidden, want: "home-owners"},
		{name: "a home being created gets the shard's Retry-After", client: client("slow"), path: "/clusters/~/api", code: http.StatusTooManyRequests},
		{name: "a home the resolver does not find", client: client("ghost"), path: "/clusters/~/api", code: http.StatusNotFound, want: homePrefix + ":ghost"},
		{name: "a bearer token is passed on to the lookup", client: f.client(t, nil, true), path: "/clusters/~/api", headers: http.Header{"Authorization": {"Bearer token-dave"}}, code: http.StatusOK, want: "/clusters/home-dave/api"},
		{name: "the Workspace ~ in any workspace is the root shard's", client: alice, path: "/clusters/root:org/apis/tenancy.kcp.io/v1alpha1/workspaces/~", code: http.StatusOK, want: homePrefix + ":alice"},
		{name: "the Workspace ~ in ~ is the root shard's", client: alice, path: "/clusters/~/apis/tenancy.kcp.io/v1alpha1/workspaces/~", code: http.StatusOK, want: homePrefix + ":alice"},
		{name: "workspaces in a workspace are its own", client: alice, path: "/clusters/root:org/apis/tenancy.kcp.io/v1alpha1/workspaces", code: http.StatusOK, want: "/clusters/org/apis/tenancy.kcp.io/v1alpha1/workspaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := get(t, tt.client, f.proxyURL+tt.path, tt.headers)
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Fatalf("status %d, want %d with %q: %s", code, tt.code, tt.want, body)
			}
			if tt.code == http.StatusTooManyRequests {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.proxyURL+tt.path, nil)
				resp, err := tt.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.Header.Get("Retry-After") != "1" {
					t.Errorf("Retry-After %q, want 1", resp.Header.Get("Retry-After"))
				}
			}
		})
	}

	// The homes were looked up once per user (the two GETs of the
	// Workspace ~ aside).
	if n := shard.count("alice"); n != 3 {
		t.Errorf("alice's home was looked up %d times, want 3 (once, and two GETs of the Workspace ~)", n)
	}
	if n := shard.count("carol"); n != 1 {
		t.Errorf("carol's home was looked up %d times, want 1", n)
	}
	// A cached home that is deleted is looked up again; the shard names
	// the new one.
	erin := client("erin")
	if code, _, body := get(t, erin, f.proxyURL+"/clusters/~/api", nil); code != http.StatusOK || !strings.Contains(body, "/clusters/home-erin-old/api") {
		t.Fatalf("erin: status %d: %s", code, body)
	}
	resolver.remove(homePrefix + ":erin-old")
	if code, _, body := get(t, erin, f.proxyURL+"/clusters/~/api", nil); code != http.StatusOK || !strings.Contains(body, "/clusters/home-erin/api") {
		t.Fatalf("erin after her home was deleted: status %d: %s", code, body)
	}
	if n := shard.count("erin"); n != 2 {
		t.Errorf("erin's home was looked up %d times, want 2", n)
	}

	// A home just named by the root shard is not asked for again.
	if n := shard.count("ghost"); n != 1 {
		t.Errorf("ghost's home was looked up %d times, want 1", n)
	}

	// Refusals are not cached.
	if code, _, _ := get(t, client("carol"), f.proxyURL+"/clusters/~/api", nil); code != http.StatusForbidden || shard.count("carol") != 2 {
		t.Errorf("carol again: status %d, %d lookups, want 403 and 2", code, shard.count("carol"))
	}
}

// TestHomeCacheBound checks that the cache of home paths keeps no more
// users than its bound, and keeps the most recent.
func TestHomeCacheBound(t *testing.T) {
	serving, proxyClients := newCA(t, "serving"), newCA(t, "proxy-clients")
	shard := &homeShard{lookups: map[string]int{}}
	root := shard.serve(t, serving, proxyClients)
	certFile, keyFile := writeFiles(t, proxyClients.issue(t, "front-proxy", nil, x509.ExtKeyUsageClientAuth))
	shards, err := NewTransports(writeCA(t, serving), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	const bound = 3
	h := newHomes(func() string { return root.URL }, shards, DefaultIdentityHeaders, bound, 0)
	req := httptestRequest(t)
	for i := range 20 {
		u := &user.DefaultInfo{Name: fmt.Sprintf("user%d", i)}
		p, _, err := h.path(t.Context(), req, u, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := homePrefix + ":" + u.Name; p.String() != want {
			t.Fatalf("home of %s: %s, want %s", u.Name, p, want)
		}
		if n := len(h.cache.Keys()); n > bound {
			t.Fatalf("%d users cached, bound %d", n, bound)
		}
	}
	if _, _, err := h.path(t.Context(), req, &user.DefaultInfo{Name: "user19"}, false); err != nil {
		t.Fatal(err)
	}
	if n := shard.count("user19"); n != 1 {
		t.Errorf("the last user was looked up %d times, want 1 (cached)", n)
	}
	if _, _, err := h.path(t.Context(), req, &user.DefaultInfo{Name: "user0"}, false); err != nil {
		t.Fatal(err)
	}
	if n := shard.count("user0"); n != 2 {
		t.Errorf("the first user was looked up %d times, want 2 (evicted)", n)
	}
}

// goneResolver is a fakeResolver whose paths can be removed.
type goneResolver struct {
	*fakeResolver
	mu   sync.Mutex
	gone map[string]bool
}

func (g *goneResolver) Resolve(ctx context.Context, p logicalcluster.Path) (resolve.Target, error) {
	g.mu.Lock()
	gone := g.gone[p.String()]
	g.mu.Unlock()
	if gone {
		return resolve.Target{}, resolve.ErrNotFound
	}
	return g.fakeResolver.Resolve(ctx, p)
}

func (g *goneResolver) remove(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gone[p] = true
}

// TestHomeLookupShared checks that requests of one user arriving together
// ask the root shard once.
func TestHomeLookupShared(t *testing.T) {
	serving, proxyClients := newCA(t, "serving"), newCA(t, "proxy-clients")
	shard := &homeShard{lookups: map[string]int{}}
	root := shard.serve(t, serving, proxyClients)
	certFile, keyFile := writeFiles(t, proxyClients.issue(t, "front-proxy", nil, x509.ExtKeyUsageClientAuth))
	shards, err := NewTransports(writeCA(t, serving), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := newHomes(func() string { return root.URL }, shards, DefaultIdentityHeaders, 10, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _, err := h.path(t.Context(), httptestRequest(t), &user.DefaultInfo{Name: "busy"}, false)
			if err == nil && p.String() != homePrefix+":busy" {
				err = fmt.Errorf("home %s", p)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := shard.count("busy"); n != 1 {
		t.Errorf("10 requests together asked the root shard %d times, want 1", n)
	}
	if len(h.inflight) != 0 {
		t.Errorf("%d lookups left under way", len(h.inflight))
	}
}

func httptestRequest(t *testing.T) *http.Request {
	t.Helper()
	return httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/clusters/~/api", nil)
}

func TestWorkspacePath(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want string
	}{
		{url: "https://proxy.example/clusters/root:users:ab:cd:alice", want: "root:users:ab:cd:alice"},
		{url: "https://proxy.example/prefix/clusters/root:a/", want: "root:a"},
		{url: "https://proxy.example/clusters/root:a/api"},
		{url: "https://proxy.example/"},
		{url: ""},
		{url: "https://proxy.example/clusters/Root"},
	} {
		p, ok := workspacePath(tt.url)
		if ok != (tt.want != "") || (ok && p.String() != tt.want) {
			t.Errorf("workspacePath(%q) = %q, %v, want %q", tt.url, p, ok, tt.want)
		}
	}
}
