package customresources

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// etcdMetric reads a metric of the embedded etcd servers of the test
// process (they register with the default prometheus registry).
func etcdMetric(t *testing.T, name string) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			}
		}
	}
	return sum
}

// TestSharedWatchCache serves widgets.example.com in two logical clusters
// with different schemas from one shared watch cache and checks that what
// a client reads from the cache is what it reads from etcd (pruned,
// defaulted and converted by its own cluster's CRD), that watches of many
// clusters add no etcd watch, that each watch sees its own cluster only,
// and that an idle cache stops and starts again.
func TestSharedWatchCache(t *testing.T) {
	url := startEtcd(t)
	ctx := t.Context()
	shared, err := NewSharedEtcd(ctx, backend(url).Transport)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Close() })
	s := newTestServer(t, &RESTOptionsGetter{Backend: backend(url), Decorator: shared.CachingDecorator()})
	s.crds.set("a", widgetCRD("a", "integer"))
	s.crds.set("b", widgetCRD("b", "string"))
	a := s.client(t, "a").Resource(widgets).Namespace("default")
	b := s.client(t, "b").Resource(widgets).Namespace("default")

	if _, err := a.Create(ctx, widget("w1", map[string]any{"size": int64(3)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, widget("w1", map[string]any{"size": "big"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// An object as an older server would have written it: a field a's
	// schema does not know, no default applied, no generation.
	raw, _ := json.Marshal(map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "raw", "namespace": "default", "uid": "raw-uid",
			"creationTimestamp": "2024-01-01T00:00:00Z", "annotations": map[string]any{"kcp.io/cluster": "a"}},
		"spec": map[string]any{"size": 5, "unknown": "x"},
	})
	if _, err := etcdClient(t, url).Put(ctx, "/registry/example.com/widgets/customresources/a/default/raw", string(raw)); err != nil {
		t.Fatal(err)
	}

	if n := shared.caches.running(); n != 0 {
		t.Fatalf("%d watch caches run before any list or watch", n)
	}
	cached := func(t *testing.T, c dynamic.ResourceInterface) *unstructured.UnstructuredList {
		t.Helper()
		l, err := c.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	fromCache := cached(t, a)
	if n := shared.caches.running(); n != 1 {
		t.Errorf("%d watch caches run after a list, want 1", n)
	}

	t.Run("the cache reads as etcd does", func(t *testing.T) {
		// A selector on a field of the schema is answered by etcd.
		fromEtcd, err := a.List(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue"})
		if err != nil {
			t.Fatal(err)
		}
		if len(fromCache.Items) != 2 || !equality.Semantic.DeepEqual(fromCache.Items, fromEtcd.Items) {
			t.Fatalf("from the cache:\n%v\nfrom etcd:\n%v", fromCache.Items, fromEtcd.Items)
		}
		for _, name := range []string{"w1", "raw"} {
			etcdGet, err := a.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cacheGet, err := a.Get(ctx, name, metav1.GetOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(etcdGet, cacheGet) {
				t.Errorf("get %s from etcd:\n%v\nfrom the cache:\n%v", name, etcdGet, cacheGet)
			}
		}
		u := fromCache.Items[0]
		if u.GetName() != "raw" {
			u = fromCache.Items[1]
		}
		if _, ok := u.Object["spec"].(map[string]any)["unknown"]; ok {
			t.Errorf("a's schema does not prune the cached object: %v", u.Object["spec"])
		}
		if c := nested(t, &u, "spec", "color"); c != "blue" {
			t.Errorf("a's default is not applied to the cached object: spec.color = %v", c)
		}
		if u.GetGeneration() != 1 {
			t.Errorf("generation %d, want 1 as read from etcd", u.GetGeneration())
		}
		// b's schema: no default, a string size.
		bl := cached(t, b)
		if len(bl.Items) != 1 || nested(t, &bl.Items[0], "spec", "size") != "big" || nested(t, &bl.Items[0], "spec", "color") != nil {
			t.Errorf("b reads %v", bl.Items)
		}
		if _, err := a.Get(ctx, "missing", metav1.GetOptions{ResourceVersion: "0"}); err == nil {
			t.Error("a missing object read from the cache exists")
		}
	})

	t.Run("watches of many clusters share one etcd watch", func(t *testing.T) {
		const perCluster = 10
		before := etcdMetric(t, "etcd_debugging_mvcc_watcher_total")
		var wa, wb []watch.Interface
		for range perCluster {
			for _, c := range []struct {
				client dynamic.ResourceInterface
				into   *[]watch.Interface
			}{{a, &wa}, {b, &wb}} {
				w, err := c.client.Watch(ctx, metav1.ListOptions{ResourceVersion: fromCache.GetResourceVersion()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(w.Stop)
				*c.into = append(*c.into, w)
			}
		}
		after := etcdMetric(t, "etcd_debugging_mvcc_watcher_total")
		if after-before > 0 {
			t.Errorf("%d watches added %.0f etcd watchers, want none", 2*perCluster, after-before)
		}
		if _, err := a.Create(ctx, widget("w2", map[string]any{"size": int64(4)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Create(ctx, widget("w2", map[string]any{"size": "small"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		expect := func(ws []watch.Interface, cluster string, check func(u *unstructured.Unstructured) error) {
			for i, w := range ws {
				select {
				case ev := <-w.ResultChan():
					u, ok := ev.Object.(*unstructured.Unstructured)
					if !ok || ev.Type != watch.Added || u.GetName() != "w2" {
						t.Fatalf("watch %d of %s: %s %v", i, cluster, ev.Type, ev.Object)
					}
					if got := u.GetAnnotations()["kcp.io/cluster"]; got != cluster {
						t.Fatalf("watch %d of %s saw an object of %s", i, cluster, got)
					}
					if err := check(u); err != nil {
						t.Errorf("watch %d of %s: %v", i, cluster, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("watch %d of %s: no event", i, cluster)
				}
			}
		}
		expect(wa, "a", func(u *unstructured.Unstructured) error {
			if c, _, _ := unstructured.NestedString(u.Object, "spec", "color"); c != "blue" {
				return fmt.Errorf("spec.color %q, want a's default", c)
			}
			return nil
		})
		expect(wb, "b", func(u *unstructured.Unstructured) error {
			if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "color"); ok {
				return fmt.Errorf("b's object got a default: %v", u.Object["spec"])
			}
			return nil
		})
		for _, w := range append(wa, wb...) {
			select {
			case ev := <-w.ResultChan():
				t.Errorf("a watch saw another cluster's event: %s %v", ev.Type, ev.Object)
			case <-time.After(100 * time.Millisecond):
			}
			w.Stop()
		}
	})

	t.Run("an idle cache stops and starts again", func(t *testing.T) {
		// The stopped watches release the cache; give them a moment.
		deadline := time.Now().Add(5 * time.Second)
		for {
			shared.caches.sweep(time.Now().Add(DefaultWatchCacheIdle))
			if shared.caches.running() == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the cache is still running after every watch ended and the idle time passed")
			}
			time.Sleep(50 * time.Millisecond)
		}
		var names []string
		for _, u := range cached(t, a).Items {
			names = append(names, u.GetName())
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"raw", "w1", "w2"}) {
			t.Errorf("a lists %v after the cache restarted", names)
		}
		if n := shared.caches.running(); n != 1 {
			t.Errorf("%d watch caches run after the restart, want 1", n)
		}
	})

	t.Run("watches across all clusters neither start nor hold the cache", func(t *testing.T) {
		all := s.client(t, "*").Resource(widgets)
		for shared.caches.running() > 0 {
			shared.caches.sweep(time.Now().Add(DefaultWatchCacheIdle))
			time.Sleep(10 * time.Millisecond)
		}
		now, err := all.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		from := metav1.ListOptions{ResourceVersion: now.GetResourceVersion()}
		fromEtcd, err := all.Watch(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		defer fromEtcd.Stop()
		if n := shared.caches.running(); n != 0 {
			t.Fatalf("a watch across all clusters started %d watch caches", n)
		}
		cached(t, a) // a tenant starts the cache
		fromCache, err := all.Watch(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		defer fromCache.Stop()
		shared.caches.sweep(time.Now().Add(DefaultWatchCacheIdle))
		if n := shared.caches.running(); n != 0 {
			t.Fatalf("%d watch caches run once idle, with only a watch across all clusters open", n)
		}
		// The cache stopped: its watch across all clusters ended, so the
		// client resumes from etcd; the one from etcd goes on.
		select {
		case _, open := <-fromCache.ResultChan():
			if open {
				t.Error("an event instead of the end of the watch")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the watch across all clusters outlived its cache")
		}
		if _, err := b.Create(ctx, widget("w3", map[string]any{"size": "tiny"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-fromEtcd.ResultChan():
			if u, ok := ev.Object.(*unstructured.Unstructured); !ok || u.GetName() != "w3" {
				t.Errorf("the watch from etcd saw %s %v", ev.Type, ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Error("the watch from etcd saw nothing")
		}
	})
}
