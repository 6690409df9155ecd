package resolve

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/rest"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// fakeShard serves Workspaces GETs: /clusters/<parent>/.../workspaces/<name>
// is found when workspaces has "<parent>:<name>", and counts the reads.
type fakeShard struct {
	workspaces map[string]tenancyv1alpha1.Workspace
	reads      atomic.Int64
}

func (f *fakeShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.reads.Add(1)
	rest := strings.TrimPrefix(r.URL.Path, "/clusters/")
	parent, rest, _ := strings.Cut(rest, "/")
	name := rest[strings.LastIndex(rest, "/")+1:]
	w.Header().Set("Content-Type", "application/json")
	ws, ok := f.workspaces[parent+":"+name]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(apierrors.NewNotFound(schema.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, name).ErrStatus)
		return
	}
	_ = json.NewEncoder(w).Encode(ws)
}

func workspace(parent, name, cluster, shard string) tenancyv1alpha1.Workspace {
	return tenancyv1alpha1.Workspace{
		TypeMeta: metav1.TypeMeta{APIVersion: "tenancy.kcp.io/v1alpha1", Kind: "Workspace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			logicalcluster.AnnotationKey:                parent,
			tenancyv1alpha1.WorkspaceShardAnnotationKey: shard,
		}},
		Spec: tenancyv1alpha1.WorkspaceSpec{Cluster: cluster},
	}
}

// newTestResolver returns a resolver whose shards "one" and "two" are
// served by fake (no watches run).
func newTestResolver(t *testing.T, fake http.Handler, size int) *Resolver {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	r, err := New(Config{Root: &rest.Config{Host: srv.URL}, CacheSize: size, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r.rootShard = "one"
	r.setShard("one", srv.URL)
	r.setShard("two", srv.URL)
	// As if their watches ran.
	for _, b := range r.backends {
		b.watching.Store(true)
	}
	r.lastRefresh = time.Now().Add(time.Hour) // no reads of Shard objects
	return r
}

func TestResolve(t *testing.T) {
	fake := &fakeShard{workspaces: map[string]tenancyv1alpha1.Workspace{
		"root:org":       workspace("root", "org", "c-org", "two"),
		"c-org:team":     workspace("c-org", "team", "c-team", "one"),
		"c-org:pending":  workspace("c-org", "pending", "", ""),
		"c-org:nowhere":  workspace("c-org", "nowhere", "c-x", "unknown-shard"),
		"c-team:deeper":  workspace("c-team", "deeper", "c-deeper", "two"),
		"c-deeper:third": workspace("c-deeper", "third", "c-third", "one"),
	}}
	r := newTestResolver(t, fake, 100)
	tests := []struct {
		path    string
		cluster logicalcluster.Name
		shard   string
		err     string
	}{
		{path: "root", cluster: "root", shard: "one"},
		{path: "root:org", cluster: "c-org", shard: "two"},
		{path: "root:org:team", cluster: "c-team", shard: "one"},
		{path: "root:org:team:deeper:third", cluster: "c-third", shard: "one"},
		{path: "root:nope", err: "not found"},
		{path: "root:org:nope:team", err: "not found"},
		{path: "root:org:pending", err: "not found"},
		{path: "root:org:nowhere", err: "unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := r.Resolve(t.Context(), logicalcluster.NewPath(tt.path))
			switch {
			case tt.err == "not found":
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("got %+v, %v; want not found", got, err)
				}
			case tt.err == "unavailable":
				var u *UnavailableError
				if !errors.As(err, &u) {
					t.Fatalf("got %+v, %v; want unavailable", got, err)
				}
			case err != nil:
				t.Fatal(err)
			case got.Cluster != tt.cluster || got.Shard != tt.shard:
				t.Errorf("got %+v, want %s on %s", got, tt.cluster, tt.shard)
			}
		})
	}

	t.Run("answers are cached until a change of the workspace", func(t *testing.T) {
		before := fake.reads.Load()
		if _, err := r.Resolve(t.Context(), logicalcluster.NewPath("root:org:team")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Resolve(t.Context(), logicalcluster.NewPath("root:nope")); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		if n := fake.reads.Load() - before; n != 0 {
			t.Errorf("%d reads for cached answers", n)
		}
		ws := fake.workspaces["c-org:team"]
		delete(fake.workspaces, "c-org:team")
		r.invalidate(&ws, true)
		if _, err := r.Resolve(t.Context(), logicalcluster.NewPath("root:org:team")); !errors.Is(err, ErrNotFound) {
			t.Errorf("after the deletion: %v, want not found", err)
		}
	})

	t.Run("a restarted watch forgets what its shard said", func(t *testing.T) {
		fake.workspaces["c-org:team"] = workspace("c-org", "team", "c-team2", "one")
		r.forgetShard("two") // c-org is on two
		got, err := r.Resolve(t.Context(), logicalcluster.NewPath("root:org:team"))
		if err != nil || got.Cluster != "c-team2" {
			t.Errorf("got %+v, %v; want c-team2", got, err)
		}
	})
}

func TestNoCachingWithoutWatch(t *testing.T) {
	fake := &fakeShard{workspaces: map[string]tenancyv1alpha1.Workspace{"root:org": workspace("root", "org", "c-org", "one")}}
	r := newTestResolver(t, fake, 100)
	r.backends["one"].watching.Store(false)
	for range 2 {
		if _, err := r.Resolve(t.Context(), logicalcluster.NewPath("root:org")); err != nil {
			t.Fatal(err)
		}
	}
	if n := fake.reads.Load(); n != 2 {
		t.Errorf("%d reads, want 2: a shard whose watch does not run is asked every time", n)
	}
}

func TestCacheIsBounded(t *testing.T) {
	fake := &fakeShard{workspaces: map[string]tenancyv1alpha1.Workspace{}}
	r := newTestResolver(t, fake, 10)
	for i := range 200 {
		_, _ = r.Resolve(t.Context(), logicalcluster.NewPath("root:w"+string(rune('a'+i%26))+strings.Repeat("x", i/26)))
	}
	if n := len(r.cache.Keys()); n > 10 {
		t.Errorf("%d cached entries, want at most 10", n)
	}
}

// TestStableAnswers: an answer read while another workspace changed is
// still cached; one read while its own workspace changed, or while a
// shard's answers were dropped, is not.
func TestStableAnswers(t *testing.T) {
	r := &Resolver{cache: cache.NewLRUExpireCache(10), touched: cache.NewLRUExpireCache(10)}
	ws := func(cluster, name string) *tenancyv1alpha1.Workspace {
		return &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kcp.io/cluster": cluster}}}
	}
	key := hopKey{parent: "p", name: "team"}
	read := entry{found: true, cluster: "c1", shard: "s1", source: "s0"}
	seq, epoch := r.seq.Load(), r.epoch.Load()
	r.invalidate(ws("p", "other"), false)
	if !r.stable(key, read, seq, epoch) {
		t.Error("a change of another workspace kept an answer from the cache")
	}
	team := ws("p", "team")
	team.Spec.Cluster, team.Annotations["core.kcp.io/shard"] = "c1", "s1"
	r.invalidate(team, false)
	if !r.stable(key, read, seq, epoch) {
		t.Error("a change of the workspace that keeps its route (a status update) kept the answer from the cache")
	}
	r.cache.Add(key, read, time.Minute)
	r.invalidate(team, false)
	if _, ok := r.cache.Get(key); !ok {
		t.Error("a status update evicted the cached route")
	}
	r.invalidate(team, true)
	if r.stable(key, read, seq, epoch) {
		t.Error("an answer read while its workspace was deleted would be cached")
	}
	if _, ok := r.cache.Get(key); ok {
		t.Error("the deletion left the cached route")
	}
	moved := team.DeepCopy()
	moved.Spec.Cluster = "c2"
	seq = r.seq.Load()
	r.invalidate(moved, false)
	if r.stable(key, read, seq, epoch) {
		t.Error("an answer read while its workspace moved would be cached")
	}
	seq = r.seq.Load()
	if !r.stable(key, read, seq, epoch) {
		t.Error("an answer read after the change is not cached")
	}
	r.forgetShard("s")
	if r.stable(key, read, seq, epoch) {
		t.Error("an answer read while a shard's answers were dropped would be cached")
	}
}
