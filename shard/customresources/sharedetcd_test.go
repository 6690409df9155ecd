package customresources

import (
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// TestSharedEtcd serves custom resources of one logical cluster from stores
// on one shared etcd client, without cluster layers (so keys carry no
// cluster), and checks that destroying the stores leaves the client usable.
func TestSharedEtcd(t *testing.T) {
	url := startEtcd(t)
	ctx := t.Context()
	shared, err := NewSharedEtcd(ctx, backend(url).Transport)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Close() })
	noLayers := func(raw storage.Interface, _ string) storage.Interface { return raw }
	s := newTestServer(t, &RESTOptionsGetter{Backend: backend(url), Decorator: shared.Decorator(noLayers)})
	s.crds.set("a", widgetCRD("a", "integer"))
	a := s.client(t, "a").Resource(widgets).Namespace("default")

	if _, err := a.Create(ctx, widget("w1", map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	keys := etcdKeys(ctx, t, etcdClient(t, url), "/registry/example.com/widgets/customresources/")
	if !slices.Equal(keys, []string{"/registry/example.com/widgets/customresources/default/w1"}) {
		t.Errorf("etcd keys %v", keys)
	}

	// Release every serving state: the stores are destroyed, the client stays.
	s.handler.Destroy()
	got, err := a.Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after the stores were destroyed: %v", err)
	}
	if c := nested(t, got, "spec", "color"); c != "blue" {
		t.Errorf("spec.color = %v, want the default", c)
	}

	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	if err := shared.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestNothingStartedPerCluster serves a CRD in many logical clusters from
// stores on a shared etcd client and checks that the number of goroutines
// does not grow with them.
func TestNothingStartedPerCluster(t *testing.T) {
	url := startEtcd(t)
	ctx := t.Context()
	shared, err := NewSharedEtcd(ctx, backend(url).Transport)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Close() })
	noLayers := func(raw storage.Interface, _ string) storage.Interface { return raw }
	s := newTestServer(t, &RESTOptionsGetter{Backend: backend(url), Decorator: shared.Decorator(noLayers)})

	list := func(i int) {
		t.Helper()
		cluster := logicalcluster.Name(fmt.Sprintf("c%d", i))
		s.crds.set(cluster, widgetCRD(cluster, "integer"))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.server.URL+"/clusters/"+string(cluster)+"/apis/example.com/v1/namespaces/default/widgets", nil)
		var out map[string]any
		if code := doJSON(t, req, &out); code != http.StatusOK {
			t.Fatalf("list in %s: %d %v", cluster, code, out)
		}
	}
	list(0)
	list(1)
	time.Sleep(100 * time.Millisecond)
	before := runtime.NumGoroutine()
	const clusters = 14 // below the test server's MaxEntries: nothing is evicted
	for i := 2; i < clusters; i++ {
		list(i)
	}
	time.Sleep(100 * time.Millisecond)
	after := runtime.NumGoroutine()
	if n := s.handler.states.len(); n != clusters {
		t.Fatalf("%d cached serving states, want %d", n, clusters)
	}
	if after-before > 3 {
		t.Errorf("goroutines grew from %d to %d while serving %d more clusters", before, after, clusters-2)
	}
}
