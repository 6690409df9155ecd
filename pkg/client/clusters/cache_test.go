package clusters

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// recorder is an API server stub that records request paths and the number
// of TCP connections clients opened to it.
type recorder struct {
	mu    sync.Mutex
	paths []string
	conns int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	// Enough of an object for typed and dynamic clients to decode.
	_ = json.NewEncoder(w).Encode(map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "cm", "namespace": "ns"},
	})
}

func (r *recorder) connState(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		r.mu.Lock()
		r.conns++
		r.mu.Unlock()
	}
}

func newRecorder(t *testing.T) (*recorder, *rest.Config) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewUnstartedServer(rec)
	srv.Config.ConnState = rec.connState
	srv.Start()
	t.Cleanup(srv.Close)
	// The base config points at one cluster, like an admin kubeconfig does.
	return rec, &rest.Config{Host: srv.URL + "/clusters/root"}
}

func TestClusterClientset(t *testing.T) {
	rec, cfg := newRecorder(t)
	cs, err := NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, name := range []logicalcluster.Name{"a", "b", "a", "root:org"} {
		if _, err := cs.Cluster(name).CoreV1().ConfigMaps("ns").Get(ctx, "cm", metav1.GetOptions{}); err != nil {
			t.Fatalf("get in %s: %v", name, err)
		}
	}
	if _, err := cs.Wildcard().CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("wildcard list: %v", err)
	}

	want := []string{
		"/clusters/a/api/v1/namespaces/ns/configmaps/cm",
		"/clusters/b/api/v1/namespaces/ns/configmaps/cm",
		"/clusters/a/api/v1/namespaces/ns/configmaps/cm",
		"/clusters/root:org/api/v1/namespaces/ns/configmaps/cm",
		"/clusters/*/api/v1/configmaps",
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.paths) != len(want) {
		t.Fatalf("paths = %q, want %q", rec.paths, want)
	}
	for i := range want {
		if rec.paths[i] != want[i] {
			t.Errorf("request %d path = %q, want %q", i, rec.paths[i], want[i])
		}
	}
	// Sequential requests to different clusters reuse one keep-alive
	// connection: there is one transport, not one per cluster.
	if rec.conns != 1 {
		t.Errorf("clients opened %d connections, want 1 shared", rec.conns)
	}
}

func TestClusterClientsetSharesHTTPClient(t *testing.T) {
	_, cfg := newRecorder(t)
	cs, err := NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	restClientOf := func(name logicalcluster.Name) *rest.RESTClient {
		rc, ok := cs.Cluster(name).CoreV1().RESTClient().(*rest.RESTClient)
		if !ok {
			t.Fatalf("unexpected REST client type %T", cs.Cluster(name).CoreV1().RESTClient())
		}
		return rc
	}
	a, b := restClientOf("a"), restClientOf("b")
	if a.Client != cs.HTTPClient() || b.Client != cs.HTTPClient() {
		t.Errorf("per-cluster clients do not share the cache's http.Client")
	}
	if a.GetRateLimiter() == nil || a.GetRateLimiter() != b.GetRateLimiter() {
		t.Errorf("per-cluster clients do not share one rate limiter")
	}
	if cs.Cluster("a") != cs.Cluster("a") {
		t.Errorf("the client of a cluster is rebuilt on every call")
	}
}

func TestCacheEviction(t *testing.T) {
	_, cfg := newRecorder(t)
	builds := map[string]int{}
	c, err := NewCache(cfg, http.DefaultClient, func(c *rest.Config, _ *http.Client) (string, error) {
		builds[c.Host]++
		return c.Host, nil
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []logicalcluster.Name{"a", "b", "a", "c", "b"} {
		got := c.Cluster(name)
		if want := HostFor(cfg.Host, name.String()); got != want {
			t.Errorf("Cluster(%q) = %q, want %q", name, got, want)
		}
	}
	// a, b built; a hit; c evicts b; b rebuilt.
	if n := builds[HostFor(cfg.Host, "b")]; n != 2 {
		t.Errorf("b built %d times, want 2 (evicted once)", n)
	}
	if n := builds[HostFor(cfg.Host, "a")]; n != 1 {
		t.Errorf("a built %d times, want 1", n)
	}
}

func TestCacheInvalidName(t *testing.T) {
	_, cfg := newRecorder(t)
	c, err := NewDynamicForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []logicalcluster.Name{"", "..", "a/b"} {
		if _, err := c.For(name); err == nil {
			t.Errorf("For(%q) succeeded, want error", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Cluster(\"..\") did not panic")
		}
	}()
	c.Cluster("..")
}

func TestDynamicAndAPIExtensionsClients(t *testing.T) {
	rec, cfg := newRecorder(t)
	dyn, err := NewDynamicForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := NewAPIExtensionsForConfigAndClient(cfg, dyn.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if _, err := dyn.Cluster("a").Resource(gvr).Namespace("ns").Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("dynamic get: %v", err)
	}
	// The stub answers with a ConfigMap; only the path matters here.
	_, _ = ext.Cluster("b").ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "cm", metav1.GetOptions{})

	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{
		"/clusters/a/api/v1/namespaces/ns/configmaps/cm",
		"/clusters/b/apis/apiextensions.k8s.io/v1/customresourcedefinitions/cm",
	}
	if len(rec.paths) != 2 || rec.paths[0] != want[0] || rec.paths[1] != want[1] {
		t.Errorf("paths = %q, want %q", rec.paths, want)
	}
	if rec.conns != 1 {
		t.Errorf("clients opened %d connections, want 1 shared", rec.conns)
	}
}
