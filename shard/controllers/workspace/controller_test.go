package workspace

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
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
	clients := newShardClients(func(s *corev1alpha1.Shard) (*rest.Config, error) {
		configs++
		return &rest.Config{Host: s.Spec.BaseURL}, nil
	})
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

// TestShardClientsFailFast: after a request to a shard timed out, requests
// to that shard fail at once until the cool-down is over, other shards
// are not affected, and a probe that gets an answer ends it.
func TestShardClientsFailFast(t *testing.T) {
	var hang atomic.Bool
	var requests atomic.Int32
	release := make(chan struct{})
	rec := &recorder{}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		requests.Add(1)
		if hang.Load() {
			select {
			case <-req.Context().Done():
			case <-release:
			}
			return
		}
		rec.ServeHTTP(w, req)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	other := httptest.NewServer(&recorder{})
	t.Cleanup(other.Close)

	c := &clock{t: time.Unix(1000, 0)}
	clients := newShardClients(func(s *corev1alpha1.Shard) (*rest.Config, error) {
		return &rest.Config{Host: s.Spec.BaseURL}, nil
	})
	clients.timeout = 200 * time.Millisecond
	clients.now = c.now
	s1 := &corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "s1"}, Spec: corev1alpha1.ShardSpec{BaseURL: slow.URL}}
	s2 := &corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "s2"}, Spec: corev1alpha1.ShardSpec{BaseURL: other.URL}}
	ctx := t.Context()

	hang.Store(true)
	if _, err := clients.Get(ctx, s1, "abc"); err == nil || errors.Is(err, errShardUnreachable) {
		t.Fatalf("first request to a hanging shard: %v, want a timeout", err)
	}
	start := time.Now()
	for range 5 {
		if _, err := clients.Get(ctx, s1, "abc"); !errors.Is(err, errShardUnreachable) {
			t.Fatalf("request during the cool-down: %v, want it to fail fast", err)
		}
	}
	if err := clients.Delete(ctx, s1, "def", "uid"); !errors.Is(err, errShardUnreachable) {
		t.Fatalf("delete during the cool-down: %v", err)
	}
	if d := time.Since(start); d > clients.timeout {
		t.Errorf("failing fast took %v", d)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests reached the hanging shard, want 1", n)
	}
	if _, err := clients.Get(ctx, s2, "abc"); err != nil {
		t.Errorf("another shard: %v", err)
	}

	// The shard answers again: the probe after the cool-down closes the
	// breaker.
	hang.Store(false)
	c.advance(initialCoolDown)
	for i := range 2 {
		if _, err := clients.Get(ctx, s1, "abc"); err != nil {
			t.Fatalf("request %d after recovery: %v", i, err)
		}
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("%d requests reached the shard, want 3", n)
	}

	// A deleted Shard leaves no state behind.
	clients.forget("s1")
	clients.forget("s2")
	clients.mu.Lock()
	defer clients.mu.Unlock()
	if len(clients.shards) != 0 {
		t.Errorf("state of %d shards kept after they were forgotten", len(clients.shards))
	}
}

func TestWorkspacesForShard(t *testing.T) {
	ws := func(name, shard string, scheduled, deleted, unavailable bool) *tenancyv1alpha1.Workspace {
		w := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{logicalcluster.AnnotationKey: "parent"}}}
		if shard != "" {
			w.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] = shard
		}
		if scheduled {
			w.Spec.Cluster = string(genName(name))
		}
		if deleted {
			now := metav1.Now()
			w.DeletionTimestamp = &now
		}
		if unavailable {
			markUnavailable(w, "down")
		} else {
			conditionsv1alpha1.MarkTrue(w, tenancyv1alpha1.WorkspaceScheduled)
		}
		return w
	}
	all := []*tenancyv1alpha1.Workspace{
		ws("new", "", false, false, false),
		ws("ready", "s1", true, false, false),
		ws("down", "s1", true, false, true),
		ws("downlocal", "", true, false, true),
		ws("downelsewhere", "s2", true, false, true),
		ws("deleting", "s1", false, true, true),
		ws("deletedunscheduled", "", false, true, false),
	}
	list := func() ([]*tenancyv1alpha1.Workspace, error) { return all, nil }
	inRoot := func(name string) *corev1alpha1.Shard {
		return &corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{logicalcluster.AnnotationKey: "root"}}}
	}
	keys := func(ks []reconciler.Key) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.Name)
		}
		return out
	}
	if got, want := keys(workspacesForShard(inRoot("s1"), list, "root")), []string{"new", "down", "deleting"}; !slices.Equal(got, want) {
		t.Errorf("for s1: %v, want %v", got, want)
	}
	if got, want := keys(workspacesForShard(inRoot("root"), list, "root")), []string{"new", "downlocal"}; !slices.Equal(got, want) {
		t.Errorf("for the local shard: %v, want %v", got, want)
	}
	elsewhere := inRoot("s1")
	elsewhere.Annotations[logicalcluster.AnnotationKey] = "org"
	if got := workspacesForShard(elsewhere, list, "root"); len(got) != 0 {
		t.Errorf("a Shard outside root enqueued %v", keys(got))
	}
}

func TestCaughtUp(t *testing.T) {
	for _, tc := range []struct {
		synced, want string
		ok           bool
	}{
		{"100", "100", true}, {"101", "100", true}, {"99", "100", false}, {"", "100", false}, {"100", "", false}, {"x", "1", false},
		{"18446744073709551615", "2", true},
	} {
		if got := caughtUp(tc.synced, tc.want); got != tc.ok {
			t.Errorf("caughtUp(%q, %q) = %v, want %v", tc.synced, tc.want, got, tc.ok)
		}
	}
}
