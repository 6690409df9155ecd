// Package framework starts shards in-process, through the same options
// chain the tessera binary uses, for integration tests.
package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/shard/server"
)

// Shard is a running in-process shard.
type Shard struct {
	t       testing.TB
	Options *options.Options
	// URL is the shard's base URL.
	URL string
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// Certs are the shard's certificate files, as of its last start.
	Certs  certs.Files
	cancel context.CancelFunc
	done   chan error
}

// Option changes the options of a shard before it starts.
type Option func(*options.Options)

// WithRequestHeader makes the shard believe the users a front-proxy
// asserts in X-Remote-* headers, when the proxy presents a client
// certificate that caFile verifies and whose common name is in names.
func WithRequestHeader(caFile string, names ...string) Option {
	return func(o *options.Options) {
		o.Authentication.RequestHeader.ClientCAFile = caFile
		o.Authentication.RequestHeader.AllowedNames = names
	}
}

// NewInstallationCA creates a CA for the shards of one installation and
// returns its certificate and key files.
func NewInstallationCA(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	p := certs.Pair{CertFile: filepath.Join(dir, "ca.crt"), KeyFile: filepath.Join(dir, "ca.key")}
	if _, _, err := certs.EnsureCA(p); err != nil {
		t.Fatal(err)
	}
	return p.CertFile, p.KeyFile
}

// WithInstallationCA makes the shard sign its certificates with the
// installation CA and trust client certificates it signed
// (--installation-ca-cert-file, --installation-ca-key-file).
func WithInstallationCA(certFile, keyFile string) Option {
	return func(o *options.Options) {
		o.InstallationCACertFile = certFile
		o.InstallationCAKeyFile = keyFile
	}
}

// JoiningRoot makes the shard a non-root shard named name that joins the
// installation of root, through root's admin kubeconfig
// (--root-shard-kubeconfig-file, --shard-name).
func JoiningRoot(root *Shard, name string) Option {
	return func(o *options.Options) {
		o.ShardName = name
		o.RootShardKubeconfigFile = root.Kubeconfig
	}
}

// StartShard starts a shard with embedded etcd in a temporary root directory
// and stops it when the test ends.
func StartShard(t testing.TB, opts ...Option) *Shard {
	t.Helper()
	o := options.NewOptions()
	o.RootDirectory = t.TempDir()
	o.SecurePort = freePort(t)
	o.EmbeddedEtcdClientPort = freePort(t)
	o.EmbeddedEtcdPeerPort = freePort(t)
	o.EmbeddedEtcdUnsafeNoFsync = true
	o.EmbeddedEtcdLogLevel = "fatal"
	for _, f := range opts {
		f(o)
	}
	s := &Shard{t: t, Options: o}
	t.Cleanup(s.Stop)
	// A port that was free when it was picked may be taken a moment later
	// (another test's listener, any process's outgoing connection): pick
	// new ports and start again, a few times.
	for attempt := 1; ; attempt++ {
		err := s.start()
		if err == nil {
			break
		}
		if attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("starting the shard, attempt %d: %v; trying other ports", attempt, err)
		o.SecurePort = freePort(t)
		o.EmbeddedEtcdClientPort = freePort(t)
		o.EmbeddedEtcdPeerPort = freePort(t)
	}
	return s
}

func freePort(t testing.TB) int {
	p, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Start starts (or restarts) the shard with its options and waits for /readyz.
func (s *Shard) Start() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// start builds and runs the shard; an error means nothing is left running.
func (s *Shard) start() error {
	t := s.t
	t.Helper()
	completed, err := s.Options.Complete()
	if err != nil {
		return err
	}
	if errs := completed.Validate(); len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := server.NewConfig(completed)
	if err != nil {
		cancel()
		return err
	}
	srv, err := cfg.Complete().New(ctx)
	if err != nil {
		cancel()
		return err
	}
	s.URL = cfg.ServerURL
	s.Certs = cfg.Certs
	s.cancel = cancel
	s.done = make(chan error, 1)
	go func() { s.done <- srv.Run(ctx) }()
	if s.Kubeconfig, err = srv.WriteAdminKubeconfig(); err != nil {
		t.Fatal(err)
	}
	s.waitReady()
	return nil
}

func (s *Shard) waitReady() {
	t := s.t
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			t.Fatalf("shard exited before it was ready: %v", err)
		default:
		}
		resp, err := client.Get(s.URL + "/readyz")
		if err == nil {
			b := make([]byte, 4096)
			n, _ := resp.Body.Read(b)
			resp.Body.Close()
			last = string(b[:n])
			if resp.StatusCode == http.StatusOK {
				return
			}
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("shard did not become ready: %s", last)
}

// Stop shuts the shard down and waits until it has stopped.
func (s *Shard) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Logf("shard stopped with: %v", err)
		}
	case <-time.After(time.Minute):
		s.t.Errorf("shard did not stop within a minute")
	}
	s.cancel = nil
}

// Config returns an admin rest.Config for a logical cluster ("" for the
// shard base URL, "*" for the wildcard).
func (s *Shard) Config(cluster logicalcluster.Name) *rest.Config {
	s.t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: s.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "shard-base"}).ClientConfig()
	if err != nil {
		s.t.Fatal(err)
	}
	if cluster != "" {
		cfg.Host = s.URL + "/clusters/" + string(cluster)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

// Kubectl runs the real kubectl against a logical cluster and returns its
// combined output.
func (s *Shard) Kubectl(cluster logicalcluster.Name, args ...string) (string, error) {
	s.t.Helper()
	full := append([]string{"--kubeconfig", s.Kubeconfig, "--context", "shard-base", "--server", s.URL + "/clusters/" + string(cluster)}, args...)
	cmd := exec.Command(KubectlPath(s.t), full...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(s.Options.RootDirectory, "kubectl-cache"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// MustKubectl is Kubectl that fails t on error.
func (s *Shard) MustKubectl(t testing.TB, cluster logicalcluster.Name, args ...string) string {
	t.Helper()
	out, err := s.Kubectl(cluster, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// KubectlPath finds the kubectl binary: $KUBECTL, then /usr/bin/kubectl, then
// PATH. A missing kubectl fails the test; `make test` builds one when the
// machine has none.
func KubectlPath(t testing.TB) string {
	for _, p := range []string{os.Getenv("KUBECTL"), "/usr/bin/kubectl"} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p
	}
	t.Fatalf("kubectl not found: set KUBECTL or run the tests through make, which builds one")
	return ""
}

// RunKubectl runs the kubectl binary with the given arguments.
func RunKubectl(args ...string) (string, error) {
	p := os.Getenv("KUBECTL")
	if p == "" {
		p = "/usr/bin/kubectl"
		if _, err := os.Stat(p); err != nil {
			p = "kubectl"
		}
	}
	out, err := exec.Command(p, args...).CombinedOutput()
	return string(out), err
}
