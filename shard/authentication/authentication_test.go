package authentication

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authentication/serviceaccount"
)

// testCA is a certificate authority that signs client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := certutil.EncodeCertificates(cert)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".crt")
	if err := os.WriteFile(file, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, file: file}
}

// client returns a client certificate for cn signed by the CA.
func (ca *testCA) client(t *testing.T, cn string, groups ...string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: groups},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// fixture is an assembled authentication over informers that are filled by
// hand and an API server that knows nothing.
type fixture struct {
	cfg             *Config
	authn           *Authentication
	serviceAccounts informers.Informer[*corev1.ServiceAccount]
	shardCA, rhCA   *testCA
	otherCA         *testCA
}

func newFixture(t *testing.T, mutate func(o *Options, f *fixture)) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{
		shardCA: newTestCA(t, dir, "shard-ca"),
		rhCA:    newTestCA(t, dir, "requestheader-ca"),
		otherCA: newTestCA(t, dir, "other-ca"),
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("static-token,alice,alice-uid,\"team\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.TokenAuthFile = tokens
	if mutate != nil {
		mutate(o, f)
	}
	if errs := o.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	cfg, err := NewConfig(o, Files{CertsDir: filepath.Join(dir, "certs"), CAFile: f.shardCA.file})
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg

	// Every API request finds nothing.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	t.Cleanup(api.Close)
	restCfg := &rest.Config{Host: api.URL}
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	clients, err := clusters.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(informers.Clients{Kubernetes: kube}, 0)
	f.serviceAccounts = factory.ServiceAccounts()
	if f.authn, err = cfg.New(Deps{ServiceAccounts: f.serviceAccounts, TokenSecrets: NewTokenSecretInformers(informers.Clients{Kubernetes: kube}).Secrets(), Clients: clients}); err != nil {
		t.Fatal(err)
	}
	return f
}

// serviceAccountToken adds a service account to cluster and returns a
// bound token for it.
func (f *fixture) serviceAccountToken(t *testing.T, cluster logicalcluster.Name) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "default", UID: "uid-" + "robot",
		Annotations: map[string]string{logicalcluster.AnnotationKey: cluster.String()}}}
	if err := f.serviceAccounts.Informer().GetIndexer().Add(sa); err != nil {
		t.Fatal(err)
	}
	issued, err := f.cfg.Issuer().Bound(serviceaccount.BoundToken{Cluster: cluster, ServiceAccount: sa, Audiences: f.cfg.APIAudiences(), Expiration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return issued.Token
}

type request struct {
	method  string
	path    string
	cert    *x509.Certificate
	token   string
	headers map[string]string
}

func (r request) http(ctx context.Context) *http.Request {
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	path := r.path
	if path == "" {
		path = "/api/v1/namespaces"
	}
	req := httptest.NewRequestWithContext(ctx, method, path, nil)
	if r.cert != nil {
		req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{r.cert}}
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.headers {
		req.Header.Add(k, v)
	}
	return req
}

func TestRequestAuthentication(t *testing.T) {
	f := newFixture(t, func(o *Options, f *fixture) {
		o.RequestHeader.ClientCAFile = f.rhCA.file
		o.RequestHeader.AllowedNames = []string{"front-proxy"}
	})
	proxyHeaders := map[string]string{"X-Remote-User": "carol", "X-Remote-Group": "ops", "X-Remote-Extra-Scope": "cluster:a"}
	saToken := f.serviceAccountToken(t, "a")

	for _, tc := range []struct {
		name string
		req  request
		// want is the user; empty for a refused request.
		want       string
		wantGroups []string
		wantExtra  map[string][]string
	}{
		{name: "client certificate", req: request{cert: f.shardCA.client(t, "bob", "devs")}, want: "bob", wantGroups: []string{"devs", "system:authenticated"}},
		{name: "client certificate of another CA", req: request{cert: f.otherCA.client(t, "bob")}},
		{name: "static token", req: request{token: "static-token"}, want: "alice", wantGroups: []string{"team", "system:authenticated"}},
		{name: "unknown token", req: request{token: "nope"}},
		{
			name: "service account token", req: request{token: saToken}, want: "system:serviceaccount:default:robot",
			wantGroups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"},
			wantExtra:  map[string][]string{serviceaccount.ClusterNameExtraKey: {"a"}},
		},
		{
			name: "front-proxy with an allowed name", req: request{cert: f.rhCA.client(t, "front-proxy"), headers: proxyHeaders},
			want: "carol", wantGroups: []string{"ops", "system:authenticated"}, wantExtra: map[string][]string{"scope": {"cluster:a"}},
		},
		{name: "front-proxy certificate without user headers", req: request{cert: f.rhCA.client(t, "front-proxy")}},
		{name: "request-header CA certificate with a name that is not allowed", req: request{cert: f.rhCA.client(t, "intruder"), headers: proxyHeaders}},
		{name: "front-proxy name signed by another CA", req: request{cert: f.otherCA.client(t, "front-proxy"), headers: proxyHeaders}},
		{name: "user headers without a certificate", req: request{headers: proxyHeaders}},
		{name: "user headers from an ordinary client are ignored", req: request{cert: f.shardCA.client(t, "bob"), headers: proxyHeaders}, want: "bob", wantGroups: []string{"system:authenticated"}},
		{name: "anonymous health check", req: request{path: "/readyz"}, want: user.Anonymous, wantGroups: []string{user.AllUnauthenticated}},
		{name: "anonymous health check of one check", req: request{path: "/livez/etcd", method: http.MethodHead}, want: user.Anonymous, wantGroups: []string{user.AllUnauthenticated}},
		{name: "anonymous version", req: request{path: "/version"}, want: user.Anonymous, wantGroups: []string{user.AllUnauthenticated}},
		{name: "anonymous write to a health path", req: request{path: "/readyz", method: http.MethodPost}},
		{name: "anonymous API request", req: request{}},
		{name: "anonymous look-alike path", req: request{path: "/readyzz"}},
		{name: "credentials win over anonymous on a health path", req: request{path: "/readyz", token: "static-token"}, want: "alice", wantGroups: []string{"team", "system:authenticated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, ok, err := f.authn.Request.AuthenticateRequest(tc.req.http(t.Context()))
			if tc.want == "" {
				if ok {
					t.Fatalf("authenticated as %q, want refused", resp.User.GetName())
				}
				return
			}
			if !ok {
				t.Fatalf("refused (%v), want %q", err, tc.want)
			}
			u := resp.User
			if u.GetName() != tc.want {
				t.Errorf("user %q, want %q", u.GetName(), tc.want)
			}
			if diff := cmp.Diff(tc.wantGroups, u.GetGroups()); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			extra := u.GetExtra()
			for k, v := range tc.wantExtra {
				if diff := cmp.Diff(v, extra[k]); diff != "" {
					t.Errorf("extra %s (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

func TestTokenReview(t *testing.T) {
	f := newFixture(t, nil)
	saToken := f.serviceAccountToken(t, "a")
	for _, tc := range []struct {
		name    string
		cluster logicalcluster.Name
		token   string
		want    bool
	}{
		{name: "service account token in its cluster", cluster: "a", token: saToken, want: true},
		{name: "service account token in another cluster", cluster: "b", token: saToken},
		{name: "static token in any cluster", cluster: "b", token: "static-token", want: true},
		{name: "unknown token", cluster: "a", token: "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, ok, err := f.authn.TokenReview.AuthenticateToken(logicalcluster.WithName(t.Context(), tc.cluster), tc.token)
			if ok != tc.want {
				t.Fatalf("authenticated %v (error %v), want %v", ok, err, tc.want)
			}
			if ok && !slices.Contains(resp.User.GetGroups(), user.AllAuthenticated) {
				t.Errorf("groups %q lack %s", resp.User.GetGroups(), user.AllAuthenticated)
			}
		})
	}
}

func TestClientCA(t *testing.T) {
	without := newFixture(t, nil)
	if got := string(without.cfg.ClientCA().CurrentCABundleContent()); !strings.Contains(got, pemOf(t, without.shardCA)) {
		t.Error("the client CA bundle lacks the shard CA")
	}
	if without.cfg.RequestHeaderConfig() != nil {
		t.Error("request-header authentication is on without a CA")
	}

	with := newFixture(t, func(o *Options, f *fixture) { o.RequestHeader.ClientCAFile = f.rhCA.file })
	got := string(with.cfg.ClientCA().CurrentCABundleContent())
	if !strings.Contains(got, pemOf(t, with.shardCA)) || !strings.Contains(got, pemOf(t, with.rhCA)) {
		t.Error("the CA bundle offered in the TLS handshake lacks the shard CA or the request-header CA")
	}
	if strings.TrimSpace(string(with.cfg.RootCA())) != pemOf(t, with.shardCA) {
		t.Error("legacy token secrets would not get the shard CA")
	}
}

func pemOf(t *testing.T, ca *testCA) string {
	t.Helper()
	data, err := os.ReadFile(ca.file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func TestNewConfigKeepsTheSigningKey(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	files := Files{CertsDir: filepath.Join(dir, "certs"), CAFile: ca.file}
	first, err := NewConfig(NewOptions(), files)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.WaitForSigningKey(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(files.CertsDir, serviceaccount.SigningKeyFile)); err != nil {
		t.Fatalf("no signing key on first start: %v", err)
	}
	second, err := NewConfig(NewOptions(), files)
	if err != nil {
		t.Fatal(err)
	}
	firstKey, err := first.Issuer().PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	secondKey, err := second.Issuer().PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	if !firstKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(secondKey) {
		t.Error("a restart changed the signing key")
	}
	if second.Issuer().Name() != DefaultIssuer || !slices.Equal(second.APIAudiences(), []string{DefaultIssuer}) {
		t.Errorf("issuer %q, audiences %q", second.Issuer().Name(), second.APIAudiences())
	}
}
