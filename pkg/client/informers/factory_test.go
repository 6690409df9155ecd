package informers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// wildcardServer is an HTTP stub of a shard's /clusters/*/api/v1/configmaps:
// a list, and watches that stream what send is given. Like a real API server
// it also answers WatchList requests, so a client that used them would get
// a stream.
type wildcardServer struct {
	objects []*corev1.ConfigMap

	mu         sync.Mutex
	paths      map[string]bool
	watchLists int
	watchers   []chan watch.Event
}

func (s *wildcardServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths[r.URL.Path] = true
	s.mu.Unlock()
	if r.URL.Path != "/clusters/*/api/v1/configmaps" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	q := r.URL.Query()
	if q.Get("watch") != "true" {
		list := corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, ListMeta: metav1.ListMeta{ResourceVersion: "10"}}
		for _, o := range s.objects {
			list.Items = append(list.Items, *o)
		}
		_ = json.NewEncoder(w).Encode(list)
		return
	}

	events := make(chan watch.Event, 10)
	s.mu.Lock()
	if q.Get("sendInitialEvents") == "true" {
		s.watchLists++
		for _, o := range s.objects {
			events <- watch.Event{Type: watch.Added, Object: o}
		}
		events <- watch.Event{Type: watch.Bookmark, Object: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{ResourceVersion: "10", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}},
		}}
	}
	s.watchers = append(s.watchers, events)
	s.mu.Unlock()

	enc := json.NewEncoder(w)
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case e := <-events:
			if err := enc.Encode(map[string]any{"type": e.Type, "object": e.Object}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// send streams an event to every open watch.
func (s *wildcardServer) send(e watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w <- e
	}
}

func (s *wildcardServer) openWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

// TestFactoryOverHTTP runs the factory's typed and unstructured informers
// against an HTTP wildcard endpoint through clients from the clusters
// package.
func TestFactoryOverHTTP(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	ax, bx := configMap("a", "ns", "x", "a"), configMap("b", "ns", "x", "b")
	srv := &wildcardServer{objects: []*corev1.ConfigMap{ax, bx}, paths: map[string]bool{}}
	server := httptest.NewServer(srv)
	t.Cleanup(server.Close)

	cfg := &rest.Config{Host: server.URL + "/clusters/root"}
	kube, err := clusters.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := clusters.NewDynamicForConfigAndClient(cfg, kube.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	factory := NewSharedInformerFactory(Clients{Kubernetes: kube.Wildcard(), Dynamic: dyn.Wildcard()}, 0)
	configMaps := factory.ConfigMaps()
	if configMaps.Informer() != factory.ConfigMaps().Informer() {
		t.Errorf("the factory made two informers for configmaps")
	}
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	unstructuredConfigMaps := factory.ForResource(gvr)
	if unstructuredConfigMaps.Informer() != factory.ForResource(gvr).Informer() {
		t.Errorf("the factory made two unstructured informers for configmaps")
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx)
	for resource, synced := range factory.WaitForCacheSync(ctx) {
		if !synced {
			t.Fatalf("%s did not sync", resource)
		}
	}

	typedValue := func(cluster logicalcluster.Name) string {
		cm, err := configMaps.Lister().Cluster(cluster).Namespace("ns").Get("x")
		if err != nil {
			return err.Error()
		}
		return cm.Data["value"]
	}
	unstructuredValue := func(cluster logicalcluster.Name) string {
		u, err := unstructuredConfigMaps.Lister().Cluster(cluster).Namespace("ns").Get("x")
		if err != nil {
			return err.Error()
		}
		v, _, _ := unstructured.NestedString(u.Object, "data", "value")
		return v
	}
	for _, c := range []logicalcluster.Name{"a", "b"} {
		if got := typedValue(c); got != c.String() {
			t.Errorf("typed lister: ns/x of %s has value %q", c, got)
		}
		if got := unstructuredValue(c); got != c.String() {
			t.Errorf("unstructured lister: ns/x of %s has value %q", c, got)
		}
	}
	if all, err := configMaps.Lister().List(nil); err != nil || len(all) != 2 {
		t.Errorf("typed List = %d objects, %v; want both ns/x", len(all), err)
	}

	// Both informers watch; an update of b's object reaches both and
	// leaves a's alone.
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		return srv.openWatches() == 2, nil
	}); err != nil {
		t.Fatalf("informers did not watch: %v", err)
	}
	srv.send(watch.Event{Type: watch.Modified, Object: withValue(bx, "b2", "11")})
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		return typedValue("b") == "b2" && unstructuredValue("b") == "b2", nil
	}); err != nil {
		t.Fatalf("update not seen: typed %q, unstructured %q", typedValue("b"), unstructuredValue("b"))
	}
	if typedValue("a") != "a" || unstructuredValue("a") != "a" {
		t.Errorf("update of b changed a: typed %q, unstructured %q", typedValue("a"), unstructuredValue("a"))
	}

	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.watchLists != 0 {
		t.Errorf("informers made %d WatchList requests, want none", srv.watchLists)
	}
	if len(srv.paths) != 1 || !srv.paths["/clusters/*/api/v1/configmaps"] {
		t.Errorf("requested paths %v, want only the wildcard configmaps", srv.paths)
	}
}

func TestFactoryTweakListOptions(t *testing.T) {
	var selectors, paths []string
	var mu sync.Mutex
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		selectors = append(selectors, r.URL.Query().Get("labelSelector"))
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(corev1.SecretList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}, ListMeta: metav1.ListMeta{ResourceVersion: "1"}})
	}))
	t.Cleanup(server.Close)
	clients, err := NewClientsForConfig(&rest.Config{Host: server.URL + "/clusters/root"})
	if err != nil {
		t.Fatal(err)
	}
	factory := NewSharedInformerFactory(clients, 0, WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = "app=web"
	}))
	factory.Secrets()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx)
	factory.WaitForCacheSync(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(selectors) == 0 || selectors[0] != "app=web" || paths[0] != "/clusters/*/api/v1/secrets" {
		t.Errorf("requests went to %q with label selectors %q, want /clusters/*/api/v1/secrets with app=web", paths, selectors)
	}
}

func TestFactoryMissingClient(t *testing.T) {
	factory := NewSharedInformerFactory(Clients{}, 0)
	for name, accessor := range map[string]func(){
		"configmaps": func() { factory.ConfigMaps() },
		"crds":       func() { factory.CustomResourceDefinitions() },
		"dynamic":    func() { factory.ForResource(corev1.SchemeGroupVersion.WithResource("pods")) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("accessor without its client did not panic")
				}
			}()
			accessor()
		})
	}
}
