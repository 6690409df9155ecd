package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/tessera-dev/tessera/frontproxy/options"
	"github.com/tessera-dev/tessera/frontproxy/server"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// signer is a CA that signs certificates in tests.
type signer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
}

func newSigner(t *testing.T, name string) *signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{cert: cert, key: key, dir: t.TempDir()}
}

// caFile writes the CA certificate and returns its path.
func (s *signer) caFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(s.dir, "ca.crt")
	if err := os.WriteFile(p, pemCert(s.cert.Raw), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// issue signs a certificate and returns its PEM certificate and key.
func (s *signer) issue(t *testing.T, cn string, orgs []string, usage x509.ExtKeyUsage, ips ...net.IP) (certPEM, keyPEM []byte) {
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
		IPAddresses:  ips,
		DNSNames:     []string{"localhost"},
	}, s.cert, key.Public(), s.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemCert(der), keyDER
}

// files writes a certificate and key and returns their paths.
func (s *signer) files(t *testing.T, name, cn string, orgs []string, usage x509.ExtKeyUsage, ips ...net.IP) (string, string) {
	t.Helper()
	c, k := s.issue(t, cn, orgs, usage, ips...)
	cf, kf := filepath.Join(s.dir, name+".crt"), filepath.Join(s.dir, name+".key")
	if err := os.WriteFile(cf, c, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kf, k, 0o600); err != nil {
		t.Fatal(err)
	}
	return cf, kf
}

// env is a shard with a front-proxy in front of it.
type env struct {
	shard     *framework.Shard
	proxyURL  string
	users     *signer
	servingCA string
	stop      context.CancelFunc
	done      chan error
}

// start starts a shard that trusts the proxy's client certificate, with
// opts, and a front-proxy in front of it.
func start(t *testing.T, cacheTTL time.Duration, opts ...framework.Option) *env {
	t.Helper()
	users := newSigner(t, "users")
	proxyClients := newSigner(t, "front-proxy-clients")
	serving := newSigner(t, "front-proxy-serving")

	proxyClientsCA := proxyClients.caFile(t)
	s := framework.StartShard(t, append([]framework.Option{framework.WithRequestHeader(proxyClientsCA, "front-proxy")}, opts...)...)
	return startProxy(t, s, filepath.Join(s.Options.RootDirectory, "certs", "ca.crt"), cacheTTL, users, proxyClients, serving)
}

// startProxy starts a front-proxy whose root shard is s and whose shards'
// serving certificates shardCA verifies; clients authenticate with users'
// certificates, and the proxy with proxyClients' front-proxy certificate.
func startProxy(t *testing.T, s *framework.Shard, shardCA string, cacheTTL time.Duration, users, proxyClients, serving *signer) *env {
	t.Helper()
	o := options.NewOptions()
	o.RootDirectory = t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.SecureServing.Listener = ln
	o.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	o.SecureServing.ServerCert.CertKey.CertFile, o.SecureServing.ServerCert.CertKey.KeyFile =
		serving.files(t, "serving", "localhost", nil, x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	o.ClientCAFile = users.caFile(t)
	o.RootKubeconfig, o.RootKubeconfigContext = s.Kubeconfig, "shard-base"
	o.ShardClientCertFile, o.ShardClientKeyFile = proxyClients.files(t, "front-proxy", "front-proxy", nil, x509.ExtKeyUsageClientAuth)
	o.ShardCAFile = shardCA
	o.CacheTTL = cacheTTL
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if errs := completed.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	cfg, err := server.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	srv := cfg.Complete().New()
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{shard: s, proxyURL: srv.URL(), users: users, servingCA: serving.caFile(t), stop: cancel, done: make(chan error, 1)}
	go func() { e.done <- srv.Run(ctx) }()
	t.Cleanup(func() { e.stopProxy(t) })
	// Wait until the proxy has read the shards.
	client := e.httpClient(t, nil)
	eventually(t, time.Minute, "the front-proxy to be ready", func(ctx context.Context) (bool, error) {
		code, _ := e.do(t, client, http.MethodGet, "/readyz", nil, nil)
		return code == http.StatusOK, nil
	})
	return e
}

// stopProxy stops the front-proxy and waits until it has stopped.
func (e *env) stopProxy(t *testing.T) {
	e.stop()
	select {
	case <-e.done:
		e.done <- nil
	case <-time.After(time.Minute):
		t.Errorf("the front-proxy did not stop")
	}
}

// clientCert returns a client certificate of the users' CA.
func (e *env) clientCert(t *testing.T, name string, groups ...string) tls.Certificate {
	t.Helper()
	c, k := e.users.issue(t, name, groups, x509.ExtKeyUsageClientAuth)
	cert, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func mustKeyPair(t *testing.T, certPEM, keyPEM []byte) tls.Certificate {
	t.Helper()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// httpClient returns a client of the proxy with the certificate, if any.
func (e *env) httpClient(t *testing.T, cert *tls.Certificate) *http.Client {
	t.Helper()
	roots, err := certutil.NewPool(e.servingCA)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 30 * time.Second}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// do sends a request to the proxy and returns the status code and body.
func (e *env) do(t *testing.T, c *http.Client, method, path string, headers http.Header, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.proxyURL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// kubeconfig writes a kubeconfig for the user through the proxy.
func (e *env) kubeconfig(t *testing.T, name string, groups ...string) string {
	t.Helper()
	c, k := e.users.issue(t, name, groups, x509.ExtKeyUsageClientAuth)
	ca, err := os.ReadFile(e.servingCA)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "user.crt"), filepath.Join(dir, "user.key")
	for p, data := range map[string][]byte{cf: c, kf: k, filepath.Join(dir, "ca.crt"): ca} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: ` + e.proxyURL + `
    certificate-authority: ` + filepath.Join(dir, "ca.crt") + `
users:
- name: user
  user:
    client-certificate: ` + cf + `
    client-key: ` + kf + `
contexts:
- name: proxy
  context: {cluster: proxy, user: user}
current-context: proxy
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// kubectl runs kubectl with a kubeconfig against a workspace path through
// the proxy.
func (e *env) kubectl(t *testing.T, kubeconfig, path string, args ...string) (string, error) {
	t.Helper()
	cmd := e.kubectlCmd(t, kubeconfig, path, args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (e *env) kubectlCmd(t *testing.T, kubeconfig, path string, args ...string) *exec.Cmd {
	t.Helper()
	full := append([]string{"--kubeconfig", kubeconfig, "--server", e.proxyURL + "/clusters/" + path}, args...)
	cmd := exec.Command(framework.KubectlPath(t), full...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(filepath.Dir(kubeconfig), "cache"))
	return cmd
}

// kcp returns an admin client of the kcp API groups in a logical cluster,
// directly on the shard.
func (e *env) kcp(t *testing.T, cluster logicalcluster.Name) *kcpclient.Clientset {
	t.Helper()
	c, err := kcpclient.NewForConfig(e.shard.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kube returns an admin client in a logical cluster, directly on the shard.
func (e *env) kube(t *testing.T, cluster logicalcluster.Name) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(e.shard.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createWorkspace creates a Workspace directly on the shard and waits until
// it is Ready.
func (e *env) createWorkspace(t *testing.T, parent logicalcluster.Name, name string) *tenancyv1alpha1.Workspace {
	t.Helper()
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.kcp(t, parent).Workspaces().Create(t.Context(), ws, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating workspace %s in %s: %v", name, parent, err)
	}
	eventually(t, time.Minute, "workspace "+name+" to be Ready", func(ctx context.Context) (bool, error) {
		var err error
		ws, err = e.kcp(t, parent).Workspaces().Get(ctx, name, metav1.GetOptions{})
		return err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, nil
	})
	return ws
}

// grantAdmin makes user cluster-admin in a logical cluster.
func (e *env) grantAdmin(t *testing.T, cluster logicalcluster.Name, user string) {
	t.Helper()
	e.bind(t, cluster, user, "cluster-admin")
}

// grantAccess lets user into a logical cluster (verb access on /), and no
// more.
func (e *env) grantAccess(t *testing.T, cluster logicalcluster.Name, user string) {
	t.Helper()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-access"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/"}, Verbs: []string{"access"}}},
	}
	if _, err := e.kube(t, cluster).RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.bind(t, cluster, user, role.Name)
}

func (e *env) bind(t *testing.T, cluster logicalcluster.Name, user, role string) {
	t.Helper()
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
	if _, err := e.kube(t, cluster).RbacV1().ClusterRoleBindings().Create(t.Context(), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		ok, err := cond(ctx)
		cancel()
		if ok {
			return
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s: %v", what, last)
}
