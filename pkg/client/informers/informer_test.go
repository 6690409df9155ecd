package informers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// fakeWildcard serves list and watch of configmaps across logical clusters
// like /clusters/* does. A watch with sendInitialEvents=true (WatchList) is
// answered faithfully with the initial events and the closing bookmark, so a
// reflector that used WatchList would sync from that stream.
type fakeWildcard struct {
	mu         sync.Mutex
	objects    []*corev1.ConfigMap
	lists      int
	watchLists int
	// watchers receives every plain watch the reflector opens.
	watchers chan *watch.FakeWatcher
}

func newFakeWildcard(objects ...*corev1.ConfigMap) *fakeWildcard {
	return &fakeWildcard{objects: objects, watchers: make(chan *watch.FakeWatcher, 10)}
}

func (f *fakeWildcard) setObjects(objects ...*corev1.ConfigMap) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects = objects
}

func (f *fakeWildcard) counts() (lists, watchLists int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists, f.watchLists
}

func (f *fakeWildcard) listWatch() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lists++
			list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}
			for _, o := range f.objects {
				list.Items = append(list.Items, *o.DeepCopy())
			}
			return list, nil
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				f.watchLists++
				w := watch.NewFakeWithChanSize(len(f.objects)+1, false)
				for _, o := range f.objects {
					w.Add(o.DeepCopy())
				}
				w.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					ResourceVersion: "10",
					Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
				}})
				return w, nil
			}
			w := watch.NewFake()
			f.watchers <- w
			return w, nil
		},
	}
}

// events records what a handler receives, as "<verb> <key>" lines.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) record(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, fmt.Sprintf(format, args...))
}

func (e *events) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	got := e.got
	e.got = nil
	slices.Sort(got)
	return got
}

func (e *events) handler() cache.ResourceEventHandler {
	key := func(obj any) string {
		k, err := KeyFunc(obj)
		if err != nil {
			return err.Error()
		}
		return k
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			e.record("add %s initial=%v value=%s", key(obj), initial, obj.(*corev1.ConfigMap).Data["value"])
		},
		UpdateFunc: func(_, obj any) {
			e.record("update %s value=%s", key(obj), obj.(*corev1.ConfigMap).Data["value"])
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				e.record("delete %s tombstone", tomb.Key)
				return
			}
			e.record("delete %s", key(obj))
		},
	}
}

// runInformer runs informer until the test ends.
func runInformer(t *testing.T, informer cache.SharedIndexInformer) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func withValue(cm *corev1.ConfigMap, value, rv string) *corev1.ConfigMap {
	cm = cm.DeepCopy()
	cm.Data["value"] = value
	cm.ResourceVersion = rv
	return cm
}

func values(cms []*corev1.ConfigMap) []string {
	var out []string
	for _, cm := range cms {
		k, _ := KeyFunc(cm)
		out = append(out, k+"="+cm.Data["value"])
	}
	slices.Sort(out)
	return out
}

func assertValues(t *testing.T, what string, got []*corev1.ConfigMap, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if g := values(got); !slices.Equal(g, want) {
		t.Errorf("%s = %q, want %q", what, g, want)
	}
}

// TestInformerKeepsSameNameAcrossClusters drives a real informer (reflector,
// FIFO, store, handlers) with the WatchListClient feature gate on, over a
// source that would stream WatchList answers, and checks that objects with
// the same namespace/name in different logical clusters stay apart through
// the initial sync, watch events and a relist.
func TestInformerKeepsSameNameAcrossClusters(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	synctest.Test(t, func(t *testing.T) {
		ax, bx := configMap("a", "ns", "x", "a"), configMap("b", "ns", "x", "b")
		ay, box := configMap("a", "ns", "y", "a"), configMap("b", "other", "x", "b")
		src := newFakeWildcard(ax, bx, ay, box)

		informer := NewSharedIndexInformer(src.listWatch(), &corev1.ConfigMap{}, 0, nil)
		rec := &events{}
		if _, err := informer.AddEventHandler(rec.handler()); err != nil {
			t.Fatal(err)
		}
		lister := NewLister[*corev1.ConfigMap](informer.GetIndexer(), corev1.Resource("configmap"))
		runInformer(t, informer)

		if !cache.WaitFor(t.Context(), "", informer.HasSyncedChecker()) {
			t.Fatal("informer did not sync")
		}
		synctest.Wait()

		assertValues(t, "List", must(lister.List(labels.Everything())), nil,
			"a|ns/x=a", "a|ns/y=a", "b|ns/x=b", "b|other/x=b")
		if lists, watchLists := src.counts(); lists != 1 || watchLists != 0 {
			t.Fatalf("reflector made %d lists and %d WatchList requests, want 1 list and no WatchList", lists, watchLists)
		}
		w := <-src.watchers
		if got := rec.take(); !slices.Equal(got, []string{
			"add a|ns/x initial=true value=a",
			"add a|ns/y initial=true value=a",
			"add b|ns/x initial=true value=b",
			"add b|other/x initial=true value=b",
		}) {
			t.Errorf("initial events = %q", got)
		}

		// The same watch stream updates one cluster's object and deletes
		// the other's.
		w.Modify(withValue(bx, "b2", "11"))
		w.Delete(withValue(ax, "a", "12"))
		synctest.Wait()
		assertValues(t, "List", must(lister.List(nil)), nil, "a|ns/y=a", "b|ns/x=b2", "b|other/x=b")
		if got := rec.take(); !slices.Equal(got, []string{"delete a|ns/x", "update b|ns/x value=b2"}) {
			t.Errorf("watch events = %q", got)
		}

		// An expired watch forces a relist. Objects missing from it are
		// deleted by their cluster-aware key, same-named ones elsewhere
		// stay.
		src.setObjects(withValue(ay, "a", "13"), withValue(box, "b", "13"), configMap("c", "ns", "x", "c"))
		w.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
		<-src.watchers
		synctest.Wait()
		assertValues(t, "List after relist", must(lister.List(nil)), nil, "a|ns/y=a", "b|other/x=b", "c|ns/x=c")
		if got := rec.take(); !slices.Equal(got, []string{
			"add c|ns/x initial=false value=c",
			"delete b|ns/x tombstone",
			"update a|ns/y value=a",
			"update b|other/x value=b",
		}) {
			t.Errorf("relist events = %q", got)
		}
		if lists, watchLists := src.counts(); lists != 2 || watchLists != 0 {
			t.Errorf("reflector made %d lists and %d WatchList requests, want 2 lists and no WatchList", lists, watchLists)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLister(t *testing.T) {
	indexer := cache.NewIndexer(KeyFunc, ClusterIndexers())
	labelled := configMap("a", "ns", "labelled", "a")
	labelled.Labels = map[string]string{"app": "web"}
	for _, obj := range []*corev1.ConfigMap{
		configMap("a", "ns", "x", "a"), configMap("b", "ns", "x", "b"),
		configMap("a", "other", "x", "a-other"), labelled,
	} {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	lister := NewLister[*corev1.ConfigMap](indexer, corev1.Resource("configmap"))
	web := labels.SelectorFromSet(labels.Set{"app": "web"})

	for _, tc := range []struct {
		name string
		list func() ([]*corev1.ConfigMap, error)
		want []string
	}{
		{"all clusters", func() ([]*corev1.ConfigMap, error) { return lister.List(labels.Everything()) },
			[]string{"a|ns/labelled=a", "a|ns/x=a", "a|other/x=a-other", "b|ns/x=b"}},
		{"all clusters by label", func() ([]*corev1.ConfigMap, error) { return lister.List(web) },
			[]string{"a|ns/labelled=a"}},
		{"cluster a", func() ([]*corev1.ConfigMap, error) { return lister.Cluster("a").List(nil) },
			[]string{"a|ns/labelled=a", "a|ns/x=a", "a|other/x=a-other"}},
		{"cluster b", func() ([]*corev1.ConfigMap, error) { return lister.Cluster("b").List(nil) },
			[]string{"b|ns/x=b"}},
		{"unknown cluster", func() ([]*corev1.ConfigMap, error) { return lister.Cluster("c").List(nil) }, nil},
		{"namespace of a", func() ([]*corev1.ConfigMap, error) { return lister.Cluster("a").Namespace("ns").List(nil) },
			[]string{"a|ns/labelled=a", "a|ns/x=a"}},
		{"namespace of a by label", func() ([]*corev1.ConfigMap, error) { return lister.Cluster("a").Namespace("ns").List(web) },
			[]string{"a|ns/labelled=a"}},
		{"all namespaces of a", func() ([]*corev1.ConfigMap, error) { return lister.Cluster("a").Namespace("").List(nil) },
			[]string{"a|ns/labelled=a", "a|ns/x=a", "a|other/x=a-other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.list()
			assertValues(t, tc.name, got, err, tc.want...)
		})
	}

	for _, tc := range []struct {
		cluster   logicalcluster.Name
		namespace string
		want      string
	}{
		{"a", "ns", "a"},
		{"b", "ns", "b"},
		{"a", "other", "a-other"},
	} {
		t.Run(fmt.Sprintf("get %s %s", tc.cluster, tc.namespace), func(t *testing.T) {
			cm, err := lister.Cluster(tc.cluster).Namespace(tc.namespace).Get("x")
			if err != nil {
				t.Fatal(err)
			}
			if cm.Data["value"] != tc.want {
				t.Errorf("Get returned the object of %q", cm.Data["value"])
			}
		})
	}

	for _, tc := range []struct {
		name string
		get  func() (*corev1.ConfigMap, error)
	}{
		{"other cluster", func() (*corev1.ConfigMap, error) { return lister.Cluster("c").Namespace("ns").Get("x") }},
		{"other namespace", func() (*corev1.ConfigMap, error) { return lister.Cluster("b").Namespace("other").Get("x") }},
		{"cluster-scoped get of a namespaced object", func() (*corev1.ConfigMap, error) { return lister.Cluster("a").Get("x") }},
	} {
		t.Run("not found: "+tc.name, func(t *testing.T) {
			_, err := tc.get()
			if !apierrors.IsNotFound(err) {
				t.Fatalf("err = %v, want NotFound", err)
			}
			status := err.(apierrors.APIStatus).Status()
			if status.Details == nil || status.Details.Kind != "configmap" || status.Details.Group != "" || status.Details.Name != "x" {
				t.Errorf("NotFound details = %+v, want configmap x of the core group", status.Details)
			}
		})
	}
}

func TestClusterScopedLister(t *testing.T) {
	indexer := cache.NewIndexer(KeyFunc, ClusterIndexers())
	for _, c := range []logicalcluster.Name{"a", "b"} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default", Annotations: map[string]string{logicalcluster.AnnotationKey: c.String()}, Labels: map[string]string{"cluster": c.String()}}}
		if err := indexer.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	lister := NewLister[*corev1.Namespace](indexer, corev1.Resource("namespace"))
	for _, c := range []logicalcluster.Name{"a", "b"} {
		ns, err := lister.Cluster(c).Get("default")
		if err != nil {
			t.Fatal(err)
		}
		if ns.Labels["cluster"] != c.String() {
			t.Errorf("Cluster(%q).Get returned the namespace of %q", c, ns.Labels["cluster"])
		}
		if got, err := lister.Cluster(c).List(nil); err != nil || len(got) != 1 {
			t.Errorf("Cluster(%q).List = %d objects, %v", c, len(got), err)
		}
	}
	if _, err := lister.Cluster("c").Get("default"); !apierrors.IsNotFound(err) {
		t.Errorf("err = %v, want NotFound", err)
	}
}

// TestHandlers checks handlers that join a running informer, the sync state
// of their registrations, removal and resync.
func TestHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeWildcard(configMap("a", "ns", "x", "a"), configMap("b", "ns", "x", "b"))
		informer := NewSharedIndexInformer(src.listWatch(), &corev1.ConfigMap{}, time.Minute, nil)
		early := &events{}
		// No resync for this one.
		earlyReg, err := informer.AddEventHandlerWithResyncPeriod(early.handler(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if earlyReg.HasSynced() {
			t.Errorf("registration synced before the informer ran")
		}
		runInformer(t, informer)
		w := <-src.watchers
		synctest.Wait()
		if !informer.HasSynced() || !earlyReg.HasSynced() {
			t.Fatalf("informer synced %v, registration synced %v", informer.HasSynced(), earlyReg.HasSynced())
		}
		early.take()

		late := &events{}
		lateReg, err := informer.AddEventHandler(late.handler())
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !lateReg.HasSynced() {
			t.Errorf("late registration did not sync")
		}
		if got := late.take(); !slices.Equal(got, []string{"add a|ns/x initial=true value=a", "add b|ns/x initial=true value=b"}) {
			t.Errorf("late handler got %q", got)
		}

		// After a minute the late handler (informer default resync) gets
		// resync updates, the early one (no resync) does not.
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if got := late.take(); !slices.Equal(got, []string{"update a|ns/x value=a", "update b|ns/x value=b"}) {
			t.Errorf("late handler resync = %q", got)
		}
		if got := early.take(); len(got) != 0 {
			t.Errorf("handler without resync got %q", got)
		}

		if err := informer.RemoveEventHandler(lateReg); err != nil {
			t.Fatal(err)
		}
		<-lateReg.(interface{ ShutdownChan() <-chan struct{} }).ShutdownChan()
		w.Add(configMap("c", "ns", "x", "c"))
		synctest.Wait()
		if got := late.take(); len(got) != 0 {
			t.Errorf("removed handler got %q", got)
		}
		if got := early.take(); !slices.Equal(got, []string{"add c|ns/x initial=false value=c"}) {
			t.Errorf("early handler got %q", got)
		}
	})
}

func TestInformerStopsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeWildcard()
		informer := NewSharedIndexInformer(src.listWatch(), &corev1.ConfigMap{}, 0, nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			informer.RunWithContext(ctx)
		}()
		<-src.watchers
		cancel()
		<-done
		if !informer.IsStopped() {
			t.Errorf("informer not stopped")
		}
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{}); err == nil {
			t.Errorf("AddEventHandler on a stopped informer succeeded")
		}
		// A second run returns at once instead of running again.
		informer.RunWithContext(t.Context())
	})
}

// TestProcessedResourceVersion checks that the informer's processed
// resourceVersion follows what its store holds: the newest object applied,
// not what the reflector merely received.
func TestProcessedResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := configMap("a", "ns", "x", "a")
		a.ResourceVersion = "7"
		src := newFakeWildcard(a)
		informer := NewSharedIndexInformer(src.listWatch(), &corev1.ConfigMap{}, 0, nil)
		p := informer.(interface{ ProcessedResourceVersion() string })
		if got := p.ProcessedResourceVersion(); got != "" {
			t.Fatalf("before running: %q, want empty", got)
		}
		runInformer(t, informer)
		if !cache.WaitFor(t.Context(), "", informer.HasSyncedChecker()) {
			t.Fatal("informer did not sync")
		}
		synctest.Wait()
		if got := p.ProcessedResourceVersion(); got != "7" {
			t.Errorf("after the list: %q, want 7 (the newest object stored)", got)
		}
		w := <-src.watchers
		b := configMap("b", "ns", "y", "b")
		b.ResourceVersion = "12"
		w.Add(b)
		synctest.Wait()
		if got := p.ProcessedResourceVersion(); got != "12" {
			t.Errorf("after an event at 12: %q", got)
		}
		older := configMap("a", "ns", "x", "a2")
		older.ResourceVersion = "9"
		w.Modify(older)
		synctest.Wait()
		if got := p.ProcessedResourceVersion(); got != "12" {
			t.Errorf("after an event at 9 that arrived later: %q, want 12", got)
		}
	})
}
