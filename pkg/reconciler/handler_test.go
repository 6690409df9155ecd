package reconciler

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func configMap(cluster logicalcluster.Name, namespace, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace:       namespace,
		Name:            name,
		Annotations:     map[string]string{logicalcluster.AnnotationKey: cluster.String()},
		ResourceVersion: "1",
	}}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  any
		want Key
		str  string
	}{
		{"namespaced", configMap("a", "ns", "x"), Key{Cluster: "a", Namespace: "ns", Name: "x"}, "a|ns/x"},
		{"cluster-scoped", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{logicalcluster.AnnotationKey: "root:org"}}},
			Key{Cluster: "root:org", Name: "ns"}, "root:org|ns"},
		{"tombstone", cache.DeletedFinalStateUnknown{Key: "b|ns/x"}, Key{Cluster: "b", Namespace: "ns", Name: "x"}, "b|ns/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KeyFor(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("KeyFor = %+v, want %+v", got, tc.want)
			}
			if got.String() != tc.str {
				t.Errorf("String = %q, want %q", got.String(), tc.str)
			}
			if parsed, err := ParseKey(tc.str); err != nil || parsed != tc.want {
				t.Errorf("ParseKey(%q) = %+v, %v", tc.str, parsed, err)
			}
		})
	}
	if _, err := KeyFor(cache.DeletedFinalStateUnknown{Key: "a|b|c"}); err == nil {
		t.Errorf("KeyFor accepted a tombstone with a malformed key")
	}
}

// drain returns the keys waiting in c's queue.
func drain(c *Controller) []Key {
	var keys []Key
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		c.queue.Done(key)
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		if a.String() < b.String() {
			return -1
		}
		return 1
	})
	return keys
}

func noop(context.Context, Key) (Result, error) { return Result{}, nil }

func TestEnqueueHandler(t *testing.T) {
	c := New("test", Func(noop), Options{})
	h := c.EnqueueHandler()
	ax, bx := configMap("a", "ns", "x"), configMap("b", "ns", "x")

	h.OnAdd(ax, true)
	h.OnAdd(bx, false)
	if got := drain(c); !slices.Equal(got, []Key{{"a", "ns", "x"}, {"b", "ns", "x"}}) {
		t.Errorf("adds enqueued %v", got)
	}
	h.OnUpdate(ax, ax)
	if got := drain(c); !slices.Equal(got, []Key{{"a", "ns", "x"}}) {
		t.Errorf("update enqueued %v", got)
	}
	h.OnDelete(bx)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "c|ns/x"})
	if got := drain(c); !slices.Equal(got, []Key{{"b", "ns", "x"}, {"c", "ns", "x"}}) {
		t.Errorf("deletes enqueued %v", got)
	}
	h.OnAdd("not an object", false)
	if got := drain(c); len(got) != 0 {
		t.Errorf("a non-object enqueued %v", got)
	}
}

func TestEnqueueMappedHandler(t *testing.T) {
	c := New("test", Func(noop), Options{})
	// Map a ConfigMap to the namespace it refers to in its cluster.
	h := EnqueueMappedHandler(c, func(cm *corev1.ConfigMap) []Key {
		return []Key{{Cluster: logicalcluster.From(cm), Name: cm.Data["namespace"]}}
	})
	refersTo := func(cm *corev1.ConfigMap, ns string) *corev1.ConfigMap {
		cm = cm.DeepCopy()
		cm.Data = map[string]string{"namespace": ns}
		return cm
	}
	old, updated := refersTo(configMap("a", "ns", "x"), "one"), refersTo(configMap("a", "ns", "x"), "two")

	h.OnAdd(old, false)
	if got := drain(c); !slices.Equal(got, []Key{{Cluster: "a", Name: "one"}}) {
		t.Errorf("add enqueued %v", got)
	}
	h.OnUpdate(old, updated)
	if got := drain(c); !slices.Equal(got, []Key{{Cluster: "a", Name: "one"}, {Cluster: "a", Name: "two"}}) {
		t.Errorf("update enqueued %v, want the old and the new reference", got)
	}
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "a|ns/x", Obj: updated})
	if got := drain(c); !slices.Equal(got, []Key{{Cluster: "a", Name: "two"}}) {
		t.Errorf("tombstone enqueued %v", got)
	}
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "a|ns/x"})
	h.OnAdd(&corev1.Secret{}, false)
	if got := drain(c); len(got) != 0 {
		t.Errorf("tombstone without object or other type enqueued %v", got)
	}
}

// TestWatchWildcardInformer wires a controller to a wildcard informer: the
// same namespace/name in two logical clusters are two keys, reconciled
// separately, also on deletion.
func TestWatchWildcardInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		watcher := watch.NewFake()
		lw := &cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return &corev1.ConfigMapList{
					ListMeta: metav1.ListMeta{ResourceVersion: "1"},
					Items:    []corev1.ConfigMap{*configMap("a", "ns", "x"), *configMap("b", "ns", "x")},
				}, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return watcher, nil
			},
		}
		informer := informers.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, nil)
		lister := informers.NewLister[*corev1.ConfigMap](informer.GetIndexer(), corev1.Resource("configmap"))

		var mu sync.Mutex
		var seen []string
		c := New("test", Func(func(_ context.Context, key Key) (Result, error) {
			_, err := lister.Cluster(key.Cluster).Namespace(key.Namespace).Get(key.Name)
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, key.String()+" found="+map[bool]string{true: "yes", false: "no"}[err == nil])
			return Result{}, nil
		}), Options{Workers: 2})
		if err := c.Watch(informer, c.EnqueueHandler()); err != nil {
			t.Fatal(err)
		}

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go informer.RunWithContext(ctx)
		run(t, c)
		// Past any polling of the cache sync.
		time.Sleep(time.Second)
		synctest.Wait()
		watcher.Delete(configMap("a", "ns", "x"))
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 3 {
			t.Fatalf("reconciled %q, want 3 reconciles", seen)
		}
		slices.Sort(seen[:2])
		want := []string{"a|ns/x found=yes", "b|ns/x found=yes", "a|ns/x found=no"}
		if !slices.Equal(seen, want) {
			t.Errorf("reconciled %q, want %q", seen, want)
		}
	})
}
