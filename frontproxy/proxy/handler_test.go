package proxy

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/tessera-dev/tessera/frontproxy/resolve"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ca signs certificates in tests.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &ca{cert: cert, key: key}
}

func (c *ca) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

func (c *ca) issue(t *testing.T, cn string, orgs []string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}, c.cert, key.Public(), c.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// writeFiles writes a certificate and its key as PEM files.
func writeFiles(t *testing.T, cert tls.Certificate) (string, string) {
	t.Helper()
	dir := t.TempDir()
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	cf, kf := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kf, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return cf, kf
}

func writeCA(t *testing.T, c *ca) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// seen is what a backend reports about a request.
type seen struct {
	Path          string
	Query         string
	User          string
	Groups        []string
	Extra         map[string][]string
	Authorization string
	Impersonate   string
	ClientCert    string
	ForwardedFor  string
}

// backend is an HTTPS server standing in for a shard: it reports what it
// received, streams on /watch and upgrades on /upgrade.
func backend(t *testing.T, serving *ca, clients *ca, release <-chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/watch"):
			w.WriteHeader(http.StatusOK)
			fmt.Fprintln(w, "first")
			w.(http.Flusher).Flush()
			<-release
			fmt.Fprintln(w, "second")
			return
		case strings.HasSuffix(r.URL.Path, "/upgrade"):
			if r.Header.Get("Upgrade") != "test-protocol" {
				http.Error(w, "no upgrade", http.StatusBadRequest)
				return
			}
			conn, rw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-protocol\r\n\r\n")
			rw.Flush()
			line, _ := rw.ReadString('\n')
			fmt.Fprintf(rw, "echo %s", line)
			rw.Flush()
			return
		}
		s := seen{Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, User: r.Header.Get("X-Remote-User"), Groups: r.Header.Values("X-Remote-Group"),
			Authorization: r.Header.Get("Authorization"), Impersonate: r.Header.Get("Impersonate-User"), Extra: map[string][]string{},
			ForwardedFor: strings.Join(r.Header.Values("X-Forwarded-For"), ",")}
		for k, v := range r.Header {
			if strings.HasPrefix(k, "X-Remote-Extra-") {
				s.Extra[k] = v
			}
		}
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			s.ClientCert = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		_ = json.NewEncoder(w).Encode(s)
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

// fakeResolver resolves from a table.
type fakeResolver struct {
	root    string
	targets map[string]resolve.Target
	down    map[string]bool
}

func (f *fakeResolver) Resolve(_ context.Context, p logicalcluster.Path) (resolve.Target, error) {
	if f.down[p.String()] {
		return resolve.Target{}, &resolve.UnavailableError{Shard: "down", Err: errors.New("connection refused")}
	}
	t, ok := f.targets[p.String()]
	if !ok {
		return resolve.Target{}, resolve.ErrNotFound
	}
	return t, nil
}

func (f *fakeResolver) RootURL() string { return f.root }
func (f *fakeResolver) Synced() bool    { return true }

type fixture struct {
	proxyURL string
	users    *ca
	serving  *ca
	release  chan struct{}
}

func setup(t *testing.T) *fixture {
	t.Helper()
	serving, users, proxyClients := newCA(t, "serving"), newCA(t, "users"), newCA(t, "proxy-clients")
	release := make(chan struct{})
	shard := backend(t, serving, proxyClients, release)
	vw := backend(t, serving, proxyClients, release)

	certFile, keyFile := writeFiles(t, proxyClients.issue(t, "front-proxy", nil, x509.ExtKeyUsageClientAuth))
	shards, err := NewTransports(writeCA(t, serving), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	vwURL, _ := url.Parse(vw.URL)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	h := New(Config{
		Resolver: &fakeResolver{
			root: shard.URL,
			targets: map[string]resolve.Target{
				"root:org":   {Shard: "one", URL: shard.URL, Cluster: "abc"},
				"abc":        {Shard: "one", URL: shard.URL, Cluster: "abc"},
				"root:moved": {Shard: "gone", URL: strings.Replace(dead.URL, "http:", "https:", 1), Cluster: "def"},
			},
			down: map[string]bool{"root:down": true},
		},
		Authentication: &Authentication{
			Certificates: x509request.New(x509.VerifyOptions{Roots: users.pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, x509request.CommonNameUserConversion),
			DropGroups:   DefaultDropGroups,
		},
		Shards:   shards,
		Mappings: []Mapping{{Prefix: "/services/vw/", Backend: vwURL, Transports: shards, Headers: IdentityHeaders{User: "X-Remote-User"}}},
	})
	front := httptest.NewUnstartedServer(h)
	front.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, Certificates: []tls.Certificate{serving.issue(t, "front", nil, x509.ExtKeyUsageServerAuth)}}
	front.EnableHTTP2 = true
	front.StartTLS()
	t.Cleanup(front.Close)
	return &fixture{proxyURL: front.URL, users: users, serving: serving, release: release}
}

func (f *fixture) client(t *testing.T, cert *tls.Certificate, http2 bool) *http.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: f.serving.pool()}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: http2}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, u string, headers http.Header) (int, seen, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	for k, vs := range headers {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var s seen
	if resp.StatusCode == http.StatusOK {
		_ = json.Unmarshal(body, &s)
	}
	return resp.StatusCode, s, string(body)
}

func TestHandler(t *testing.T) {
	f := setup(t)
	alice := f.users.issue(t, "alice", []string{"team", "system:masters"}, x509.ExtKeyUsageClientAuth)
	aliceClient := f.client(t, &alice, true)
	anonymous := f.client(t, nil, true)
	forged := http.Header{"X-Forwarded-For": {"10.1.2.3"}, "X-Remote-User": {"admin"}, "X-Remote-Group": {"system:masters"}, "X-Remote-Extra-Scopes": {"x"}, "x-remote-extra-other": {"y"}}

	tests := []struct {
		name    string
		client  *http.Client
		path    string
		headers http.Header
		code    int
		want    *seen
	}{
		{"a workspace path goes to its cluster, with the user asserted", aliceClient, "/clusters/root:org/api/v1/namespaces/a/configmaps?watch=1&labelSelector=a%3Db", forged, 200,
			&seen{Path: "/clusters/abc/api/v1/namespaces/a/configmaps", Query: "watch=1&labelSelector=a%3Db", User: "alice", Groups: []string{"team"}, ClientCert: "front-proxy"}},
		{"a cluster name", aliceClient, "/clusters/abc/apis", nil, 200, &seen{Path: "/clusters/abc/apis", User: "alice", Groups: []string{"team"}, ClientCert: "front-proxy"}},
		{"the cluster root", aliceClient, "/clusters/root:org", nil, 200, &seen{Path: "/clusters/abc", User: "alice", Groups: []string{"team"}, ClientCert: "front-proxy"}},
		{"escaped paths stay escaped", aliceClient, "/clusters/root:org/api/v1/namespaces/a%2Fb", nil, 200, &seen{Path: "/clusters/abc/api/v1/namespaces/a%2Fb", User: "alice", Groups: []string{"team"}, ClientCert: "front-proxy"}},
		{"other paths go to root", aliceClient, "/apis/apps/v1", nil, 200, &seen{Path: "/clusters/root/apis/apps/v1", User: "alice", Groups: []string{"team"}, ClientCert: "front-proxy"}},
		{"a mapped /services/ prefix", aliceClient, "/services/vw/clusters/*/api", forged, 200, &seen{Path: "/services/vw/clusters/%2A/api", User: "alice", Groups: []string{"team"}, ClientCert: "front-proxy"}},
		{"an unmapped /services/ prefix goes to the root shard", aliceClient, "/services/other/x", nil, 200, &seen{Path: "/services/other/x", User: "alice", Groups: []string{"team"}, ClientCert: "front-proxy"}},
		{"impersonation is left to the shard", aliceClient, "/clusters/abc/api", http.Header{"Impersonate-User": {"bob"}}, 200, &seen{Path: "/clusters/abc/api", User: "alice", Groups: []string{"team"}, Impersonate: "bob", ClientCert: "front-proxy"}},
		{"a bearer token is passed on without identity headers or the proxy's certificate", anonymous, "/clusters/root:org/api", mergeHeaders(forged, http.Header{"Authorization": {"Bearer abc"}}), 200,
			&seen{Path: "/clusters/abc/api", Authorization: "Bearer abc"}},
		{"no credentials", anonymous, "/clusters/root:org/api", forged, 401, nil},
		{"basic auth", anonymous, "/clusters/root:org/api", http.Header{"Authorization": {"Basic YTpi"}}, 401, nil},
		{"wildcard", aliceClient, "/clusters/*/api", nil, 403, nil},
		{"system cluster", aliceClient, "/clusters/system:admin/api", nil, 403, nil},
		{"invalid path", aliceClient, "/clusters/a..b/api", nil, 400, nil},
		{"no path", aliceClient, "/clusters/", nil, 400, nil},
		{"unknown path", aliceClient, "/clusters/root:nope/api", nil, 404, nil},
		{"unavailable shard while resolving", aliceClient, "/clusters/root:down/api", nil, 503, nil},
		{"unavailable shard while proxying", aliceClient, "/clusters/root:moved/api", nil, 503, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got, body := get(t, tt.client, f.proxyURL+tt.path, tt.headers)
			if code != tt.code {
				t.Fatalf("status %d, want %d: %s", code, tt.code, body)
			}
			if tt.want == nil {
				if !strings.Contains(body, `"kind":"Status"`) {
					t.Errorf("not a Status: %s", body)
				}
				return
			}
			if got.Path != tt.want.Path || got.Query != tt.want.Query || got.User != tt.want.User || !slices.Equal(got.Groups, tt.want.Groups) ||
				got.Authorization != tt.want.Authorization || got.Impersonate != tt.want.Impersonate || got.ClientCert != tt.want.ClientCert {
				t.Errorf("backend saw %+v, want %+v", got, *tt.want)
			}
			if got.ForwardedFor != "127.0.0.1" {
				t.Errorf("X-Forwarded-For %q, want the client's address alone", got.ForwardedFor)
			}
			for k := range got.Extra {
				if !strings.EqualFold(k, "X-Remote-Extra-Authentication.kubernetes.io%2Fcredential-Id") {
					t.Errorf("backend saw extra header %s", k)
				}
			}
		})
	}

	t.Run("watches are flushed as they come", func(t *testing.T) {
		resp, err := aliceClient.Get(f.proxyURL + "/clusters/root:org/watch")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		done := make(chan string, 1)
		go func() {
			l, _ := r.ReadString('\n')
			done <- l
		}()
		select {
		case l := <-done:
			if l != "first\n" {
				t.Errorf("read %q", l)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the first event did not arrive before the backend finished")
		}
		close(f.release)
		if l, _ := r.ReadString('\n'); l != "second\n" {
			t.Errorf("read %q", l)
		}
	})

	t.Run("upgrades pass through", func(t *testing.T) {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(f.proxyURL, "https://"), &tls.Config{RootCAs: f.serving.pool(), Certificates: []tls.Certificate{alice}, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "GET /clusters/root:org/upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test-protocol\r\n\r\n")
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		fmt.Fprintf(conn, "hello\n")
		if l, _ := r.ReadString('\n'); l != "echo hello\n" {
			t.Errorf("read %q", l)
		}
	})
}

func mergeHeaders(hs ...http.Header) http.Header {
	out := http.Header{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	return out
}
