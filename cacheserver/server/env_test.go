package server_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/cacheserver/options"
	"github.com/tessera-dev/tessera/cacheserver/server"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/shard/etcd"
)

var apiExports = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexports"}

// testServer is a cache server started through the options chain the
// binary uses, on free ports, with its root directory in a temporary
// directory.
type testServer struct {
	t      *testing.T
	config *server.Config
	cancel context.CancelFunc
	done   chan error
	// admin is the TLS configuration of a system:masters client.
	admin rest.TLSClientConfig
}

// etcdPorts are the embedded etcd's ports, kept across restarts.
type etcdPorts struct{ client, peer int }

func freeEtcdPorts(t *testing.T) etcdPorts {
	t.Helper()
	c, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return etcdPorts{c, p}
}

// startServer starts a cache server on root and waits until it is ready;
// it is stopped when the test ends, unless stop is called first.
func startServer(t *testing.T, root string, ports etcdPorts) *testServer {
	t.Helper()
	return startServerWith(t, root, ports, nil, nil)
}

// startServerWith is startServer with changed options, and admin's TLS
// configuration instead of the generated CA and admin certificate.
func startServerWith(t *testing.T, root string, ports etcdPorts, change func(*options.Options), admin *rest.TLSClientConfig) *testServer {
	t.Helper()
	o := options.NewOptions()
	o.RootDirectory = root
	o.SecurePort = 0
	o.EmbeddedEtcdClientPort = ports.client
	o.EmbeddedEtcdPeerPort = ports.peer
	o.EmbeddedEtcdUnsafeNoFsync = true
	if change != nil {
		change(o)
	}
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
	ctx, cancel := context.WithCancel(context.Background())
	s, err := cfg.Complete().New(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ts := &testServer{t: t, config: cfg, cancel: cancel, done: make(chan error, 1)}
	if admin != nil {
		ts.admin = *admin
	} else {
		ts.admin = rest.TLSClientConfig{CAFile: cfg.Files.CA.CertFile, CertFile: cfg.Files.Admin.CertFile, KeyFile: cfg.Files.Admin.KeyFile}
	}
	go func() { ts.done <- s.Run(ctx) }()
	t.Cleanup(ts.stop)
	ts.waitReady()
	return ts
}

func newTestServer(t *testing.T) *testServer {
	return startServer(t, filepath.Join(t.TempDir(), "cache"), freeEtcdPorts(t))
}

// stop stops the server and waits until it has stopped.
func (s *testServer) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			s.t.Errorf("cache server stopped with: %v", err)
		}
	case <-time.After(time.Minute):
		s.t.Error("cache server did not stop within a minute")
	}
}

func (s *testServer) waitReady() {
	s.t.Helper()
	client, err := rest.HTTPClientFor(s.restConfig(""))
	if err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := client.Get(s.config.ServerURL + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("cache server not ready within a minute: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// restConfig is the admin's configuration for path below the server URL.
func (s *testServer) restConfig(path string) *rest.Config {
	return &rest.Config{
		Host:            s.config.ServerURL + path,
		TLSClientConfig: s.admin,
		QPS:             -1,
		Burst:           -1,
	}
}

// dynamic is the admin's dynamic client for a shard and cluster (or *).
func (s *testServer) dynamic(shard, cluster string) dynamic.Interface {
	s.t.Helper()
	c, err := dynamic.NewForConfig(s.restConfig(server.ScopeURL(shard, cluster)))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// userConfig is the configuration of a user with a client certificate of
// the server's CA, in groups.
func (s *testServer) userConfig(path, user string, groups ...string) *rest.Config {
	s.t.Helper()
	ca, caKey, err := certs.EnsureCA(s.config.Files.CA)
	if err != nil {
		s.t.Fatal(err)
	}
	dir := s.t.TempDir()
	p := certs.Pair{CertFile: filepath.Join(dir, "user.crt"), KeyFile: filepath.Join(dir, "user.key")}
	if err := certs.EnsureClient(p, ca, caKey, user, groups); err != nil {
		s.t.Fatal(err)
	}
	cfg := s.restConfig(path)
	cfg.CertFile, cfg.KeyFile = p.CertFile, p.KeyFile
	return cfg
}

// apiExport is an APIExport as a shard would replicate it: with the
// metadata the shard gave it.
func apiExport(name, cluster string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apis.kcp.io/v1alpha1",
		"kind":       "APIExport",
		"metadata": map[string]interface{}{
			"name":              name,
			"uid":               "uid-" + cluster + "-" + name,
			"creationTimestamp": "2024-01-02T03:04:05Z",
			"generation":        int64(3),
			"resourceVersion":   "12345",
			"labels":            map[string]interface{}{"app": name},
			"annotations": map[string]interface{}{
				"kcp.io/cluster": cluster,
				"kcp.io/path":    "root:" + cluster,
			},
		},
		"spec": map[string]interface{}{
			"identity": map[string]interface{}{"secretRef": map[string]interface{}{"name": name}},
		},
	}}
	return u
}
