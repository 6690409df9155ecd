package workspace

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
)

// recorder is an API server stub that answers every request with a
// LogicalCluster and records method, path and body.
type recorder struct {
	mu       sync.Mutex
	requests []string
	bodies   []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.requests = append(r.requests, req.Method+" "+req.URL.Path)
	r.bodies = append(r.bodies, string(body))
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
		"metadata": map[string]any{"name": "cluster"},
	})
}

func TestShardClientsUseBaseURL(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	var configs int
	clients := &shardClients{
		config: func(s *corev1alpha1.Shard) (*rest.Config, error) {
			configs++
			return &rest.Config{Host: s.Spec.BaseURL}, nil
		},
		shards: map[string]*shardClient{},
	}
	s1 := &corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "s1"}, Spec: corev1alpha1.ShardSpec{BaseURL: srv.URL + "/prefix"}}
	ctx := t.Context()
	lc := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	if _, err := clients.Create(ctx, s1, "abc", lc); err != nil {
		t.Fatal(err)
	}
	if _, err := clients.Get(ctx, s1, "def"); err != nil {
		t.Fatal(err)
	}
	if err := clients.Delete(ctx, s1, "abc", "lc-uid"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"POST /prefix/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters",
		"GET /prefix/clusters/def/apis/core.kcp.io/v1alpha1/logicalclusters/cluster",
		"DELETE /prefix/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters/cluster",
	}
	rec.mu.Lock()
	if strings.Join(rec.requests, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(rec.requests, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(rec.bodies[2], `"uid":"lc-uid"`) {
		t.Errorf("delete without UID precondition: %s", rec.bodies[2])
	}
	rec.mu.Unlock()
	if configs != 1 {
		t.Errorf("ShardConfig called %d times for one shard, want 1", configs)
	}
	// A new baseURL builds new clients.
	s1 = s1.DeepCopy()
	s1.Spec.BaseURL = srv.URL
	if _, err := clients.Get(ctx, s1, "def"); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if configs != 2 || rec.requests[3] != "GET /clusters/def/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" {
		t.Errorf("after a baseURL change: %d configs, request %s", configs, rec.requests[3])
	}
}

func TestNew(t *testing.T) {
	srv := httptest.NewServer(&recorder{})
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	clients, err := informers.NewClientsForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(clients, 0)
	if _, err := New(Config{Informers: f}); err == nil {
		t.Errorf("New accepted a config without ShardName, ShardConfig, Loopback and TypeLookup")
	}
	c, err := New(Config{
		Informers:   f,
		ShardName:   "root",
		ShardConfig: func(*corev1alpha1.Shard) (*rest.Config, error) { return cfg, nil },
		Loopback:    cfg,
		TypeLookup:  func(tenancyv1alpha1.WorkspaceTypeReference) (*tenancyv1alpha1.WorkspaceType, error) { return nil, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != ControllerName {
		t.Errorf("Name() = %q", c.Name())
	}
}
