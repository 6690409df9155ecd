package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/cacheserver/options"
	"github.com/tessera-dev/tessera/cacheserver/server"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/shard/etcd/etcdtest"
)

func TestCRUD(t *testing.T) {
	s := newTestServer(t)
	ctx := t.Context()
	exports := s.dynamic("a", "x").Resource(apiExports)

	written := apiExport("e1", "x")
	written.SetFinalizers([]string{"apis.kcp.io/apiexport"})
	written.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kcp", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apis.kcp.io/v1alpha1"}})
	created, err := exports.Create(ctx, written.DeepCopy(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(written.GetManagedFields(), created.GetManagedFields()); diff != "" {
		t.Errorf("managed fields not kept as written (-written +created):\n%s", diff)
	}
	if diff := cmp.Diff(written.GetFinalizers(), created.GetFinalizers()); diff != "" {
		t.Errorf("finalizers not kept as written (-written +created):\n%s", diff)
	}
	// The metadata the shard wrote is kept; resourceVersion is the cache's.
	if created.GetUID() != written.GetUID() || created.GetGeneration() != 3 ||
		!created.GetCreationTimestamp().Time.Equal(written.GetCreationTimestamp().Time) ||
		created.GetLabels()["app"] != "e1" || created.GetResourceVersion() == "12345" || created.GetResourceVersion() == "" {
		t.Errorf("created metadata not kept as written: %+v", created.Object["metadata"])
	}
	wantAnnotations := map[string]string{"kcp.io/cluster": "x", "kcp.io/path": "root:x", "kcp.io/shard": "a"}
	if diff := cmp.Diff(wantAnnotations, created.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if _, err := exports.Create(ctx, written.DeepCopy(), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: want AlreadyExists, got %v", err)
	}

	got, err := exports.Get(ctx, "e1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created.Object, got.Object); diff != "" {
		t.Errorf("get (-created +got):\n%s", diff)
	}
	list, err := exports.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names(list) != "e1" {
		t.Errorf("list: got %q", names(list))
	}

	w, err := exports.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// An update replaces the object as written, generation included.
	update := got.DeepCopy()
	update.SetGeneration(4)
	update.Object["spec"] = map[string]interface{}{"changed": true}
	updated, err := exports.Update(ctx, update, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.GetGeneration() != 4 || updated.GetUID() != written.GetUID() || updated.GetResourceVersion() == got.GetResourceVersion() {
		t.Errorf("update: got metadata %+v", updated.Object["metadata"])
	}
	// An update on an old resourceVersion is a conflict.
	if _, err := exports.Update(ctx, got.DeepCopy(), metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: want Conflict, got %v", err)
	}
	if err := exports.Delete(ctx, "e1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := exports.Get(ctx, "e1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: want NotFound, got %v", err)
	}
	expectEvents(t, w, []string{"MODIFIED e1", "DELETED e1"})

	// A replica with finalizers is deleted at once, and deletecollection
	// deletes what the selector selects.
	for _, n := range []string{"f1", "f2", "f3"} {
		e := apiExport(n, "x")
		e.SetFinalizers([]string{"example.com/keep"})
		if n == "f3" {
			e.SetLabels(map[string]string{"keep": "yes"})
		}
		if _, err := exports.Create(ctx, e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := exports.Delete(ctx, "f1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := exports.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "keep!=yes"}); err != nil {
		t.Fatal(err)
	}
	list, err = exports.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names(list) != "f3" {
		t.Errorf("after delete and deletecollection: got %q, want f3", names(list))
	}
	// Field selectors on metadata.name.
	list, err = exports.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=f3"})
	if err != nil || names(list) != "f3" {
		t.Errorf("field selector: got %q, %v", names(list), err)
	}
	if _, err := exports.List(ctx, metav1.ListOptions{FieldSelector: "spec.x=1"}); !apierrors.IsBadRequest(err) {
		t.Errorf("field selector on spec: want BadRequest, got %v", err)
	}
}

func TestWildcards(t *testing.T) {
	for _, cached := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch cache %v", cached), func(t *testing.T) {
			testWildcards(t, startServerWith(t, filepath.Join(t.TempDir(), "cache"), freeEtcdPorts(t), func(o *options.Options) { o.WatchCache = cached }, nil))
		})
	}
}

func testWildcards(t *testing.T, s *testServer) {
	ctx := t.Context()
	put := func(shard, cluster, name string) {
		t.Helper()
		if _, err := s.dynamic(shard, cluster).Resource(apiExports).Create(ctx, apiExport(name, cluster), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "x", "ax")
	put("a", "y", "ay")
	put("b", "x", "bx")
	// The same name in a shard whose name has "a" as a prefix.
	put("ab", "x", "ax")

	for _, tc := range []struct {
		shard, cluster string
		want           string
	}{
		{"*", "*", "a/x/ax a/y/ay ab/x/ax b/x/bx"},
		{"a", "*", "a/x/ax a/y/ay"},
		{"*", "x", "a/x/ax ab/x/ax b/x/bx"},
		{"b", "*", "b/x/bx"},
		{"a", "x", "a/x/ax"},
		{"b", "y", ""},
		{"c", "*", ""},
	} {
		t.Run(tc.shard+"/"+tc.cluster, func(t *testing.T) {
			list, err := s.dynamic(tc.shard, tc.cluster).Resource(apiExports).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := scoped(list); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}

	// An object of one shard is never visible under another.
	if _, err := s.dynamic("b", "x").Resource(apiExports).Get(ctx, "ax", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ax of shard a under shard b: want NotFound, got %v", err)
	}
	if _, err := s.dynamic("a", "y").Resource(apiExports).Get(ctx, "ax", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ax of cluster x under cluster y: want NotFound, got %v", err)
	}

	// Watches across shards and clusters see what their scope selects.
	watches := map[string]watch.Interface{}
	for _, sc := range []string{"*/*", "a/*", "*/x"} {
		shard, cluster, _ := strings.Cut(sc, "/")
		w, err := s.dynamic(shard, cluster).Resource(apiExports).Watch(ctx, metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watches[sc] = w
	}
	put("c", "y", "cy")
	put("a", "z", "az")
	put("d", "x", "dx")
	expectEvents(t, watches["*/*"], []string{"ADDED ax", "ADDED ay", "ADDED ax", "ADDED bx", "ADDED cy", "ADDED az", "ADDED dx"})
	expectEvents(t, watches["a/*"], []string{"ADDED ax", "ADDED ay", "ADDED az"})
	expectEvents(t, watches["*/x"], []string{"ADDED ax", "ADDED ax", "ADDED bx", "ADDED dx"})
}

func TestInformerAcrossShards(t *testing.T) {
	s := newTestServer(t)
	ctx := t.Context()
	if _, err := s.dynamic("a", "x").Resource(apiExports).Create(ctx, apiExport("before", "x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var (
		mu     sync.Mutex
		events []string
	)
	record := func(what string, obj interface{}) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u := obj.(*unstructured.Unstructured)
		mu.Lock()
		defer mu.Unlock()
		events = append(events, fmt.Sprintf("%s %s/%s/%s", what, u.GetAnnotations()["kcp.io/shard"], u.GetAnnotations()["kcp.io/cluster"], u.GetName()))
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(s.dynamic("*", "*"), 0)
	informer := factory.ForResource(apiExports).Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { record("add", obj) },
		UpdateFunc: func(_, obj interface{}) { record("update", obj) },
		DeleteFunc: func(obj interface{}) { record("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	informerCtx, stop := context.WithCancel(ctx)
	factory.Start(informerCtx.Done())
	defer func() {
		stop()
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer did not sync")
	}

	b := s.dynamic("b", "y").Resource(apiExports)
	created, err := b.Create(ctx, apiExport("later", "y"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.SetLabels(map[string]string{"v": "2"})
	if _, err := b.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.dynamic("a", "x").Resource(apiExports).Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"add a/x/before", "add b/y/later", "update b/y/later", "delete a/x/before"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), events...)
		mu.Unlock()
		if cmp.Equal(want, got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("informer events: got %q, want %q", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	keys := informer.GetStore().ListKeys()
	if len(keys) != 1 {
		t.Errorf("informer store: got keys %q, want one", keys)
	}
}

func TestAuthentication(t *testing.T) {
	s := newTestServer(t)
	path := server.ScopeURL("a", "x") + "/apis/apis.kcp.io/v1alpha1/apiexports"
	for _, tc := range []struct {
		name   string
		config *rest.Config
		want   int
	}{
		{"admin", s.restConfig(""), http.StatusOK},
		{"masters", s.userConfig("", "shard-root", "system:masters"), http.StatusOK},
		{"other user", s.userConfig("", "alice", "system:kcp:admin"), http.StatusForbidden},
		{"no certificate", &rest.Config{Host: s.config.ServerURL, TLSClientConfig: rest.TLSClientConfig{CAFile: s.config.Files.CA.CertFile}}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{path, "/readyz", "/livez", "/healthz", server.ScopeURL("*", "*") + "/apis"} {
				code, body := get(t, tc.config, p)
				want := tc.want
				if code != want {
					t.Errorf("GET %s: got %d %s, want %d", p, code, body, want)
				}
				if want != http.StatusOK && p == path && !strings.Contains(body, `"kind":"Status"`) {
					t.Errorf("GET %s: want a Status, got %s", p, body)
				}
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	s := newTestServer(t)
	ctx := t.Context()
	if _, err := s.dynamic("a", "x").Resource(apiExports).Create(ctx, apiExport("e", "x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	methodNotAllowed := func(err error) bool { return apierrors.ReasonForError(err) == metav1.StatusReasonMethodNotAllowed }
	for _, sc := range [][2]string{{"*", "*"}, {"a", "*"}, {"*", "x"}} {
		r := s.dynamic(sc[0], sc[1]).Resource(apiExports)
		name := sc[0] + "/" + sc[1]
		if _, err := r.Create(ctx, apiExport("w", "x"), metav1.CreateOptions{}); !methodNotAllowed(err) {
			t.Errorf("create at %s: want MethodNotAllowed, got %v", name, err)
		}
		if _, err := r.Get(ctx, "e", metav1.GetOptions{}); !methodNotAllowed(err) {
			t.Errorf("get at %s: want MethodNotAllowed, got %v", name, err)
		}
		if _, err := r.Update(ctx, apiExport("e", "x"), metav1.UpdateOptions{}); !methodNotAllowed(err) {
			t.Errorf("update at %s: want MethodNotAllowed, got %v", name, err)
		}
		if err := r.Delete(ctx, "e", metav1.DeleteOptions{}); !methodNotAllowed(err) {
			t.Errorf("delete at %s: want MethodNotAllowed, got %v", name, err)
		}
		if err := r.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); !methodNotAllowed(err) {
			t.Errorf("deletecollection at %s: want MethodNotAllowed, got %v", name, err)
		}
	}
	if _, err := s.dynamic("a", "x").Resource(apiExports).Get(ctx, "e", metav1.GetOptions{}); err != nil {
		t.Errorf("the replica is gone after refused writes: %v", err)
	}

	admin := s.restConfig("")
	base := server.ScopeURL("a", "x") + "/apis/apis.kcp.io/v1alpha1/apiexports"
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"malformed JSON", "POST", base, `{"apiVersion":`, http.StatusBadRequest},
		{"no kind", "POST", base, `{"apiVersion":"apis.kcp.io/v1alpha1","metadata":{"name":"n"}}`, http.StatusBadRequest},
		{"other kind", "POST", base, `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIBinding","metadata":{"name":"n"}}`, http.StatusBadRequest},
		{"other version", "POST", base, `{"apiVersion":"apis.kcp.io/v1alpha2","kind":"APIExport","metadata":{"name":"n"}}`, http.StatusBadRequest},
		{"invalid name", "POST", base, `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"a/b"}}`, http.StatusUnprocessableEntity},
		{"no name", "POST", base, `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{}}`, http.StatusUnprocessableEntity},
		{"other cluster's annotation", "POST", base, `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"n","annotations":{"kcp.io/cluster":"y"}}}`, http.StatusBadRequest},
		{"other shard's annotation", "POST", base, `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"n","annotations":{"kcp.io/shard":"b"}}}`, http.StatusBadRequest},
		{"name not the URL's", "PUT", base + "/e", `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"f"}}`, http.StatusBadRequest},
		{"update of a missing replica", "PUT", base + "/missing", `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"missing"}}`, http.StatusNotFound},
		{"conflict", "PUT", base + "/e", `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"e","resourceVersion":"1"}}`, http.StatusConflict},
		{"unknown resource", "GET", server.ScopeURL("a", "x") + "/apis/apis.kcp.io/v1alpha1/apibindings", "", http.StatusNotFound},
		{"unknown group", "GET", server.ScopeURL("a", "x") + "/apis/example.com/v1/things", "", http.StatusNotFound},
		{"namespaced path", "GET", server.ScopeURL("a", "x") + "/apis/apis.kcp.io/v1alpha1/namespaces/default/apiexports", "", http.StatusNotFound},
		{"subresource", "GET", base + "/e/status", "", http.StatusNotFound},
		{"patch", "PATCH", base + "/e", `{}`, http.StatusMethodNotAllowed},
		{"core group", "GET", server.ScopeURL("a", "x") + "/api/v1/configmaps", "", http.StatusNotFound},
		{"no scope", "GET", "/apis/apis.kcp.io/v1alpha1/apiexports", "", http.StatusNotFound},
		{"bad shard", "GET", "/services/cache/shards/A_B/clusters/x/apis", "", http.StatusBadRequest},
		{"bad cluster", "GET", "/services/cache/shards/a/clusters/X/apis", "", http.StatusBadRequest},
		{"no cluster", "GET", "/services/cache/shards/a/apis", "", http.StatusBadRequest},
		{"resourceVersion not a number", "GET", base + "?resourceVersion=garbage", "", http.StatusBadRequest},
		{"resourceVersion beyond etcd's", "GET", base + "?resourceVersion=18446744073709551615&resourceVersionMatch=Exact", "", http.StatusBadRequest},
		{"resourceVersion beyond etcd's, paged", "GET", base + "?resourceVersion=18446744073709551615&limit=5", "", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, admin, tc.method, tc.path, tc.body)
			if code != tc.want {
				t.Errorf("%s %s: got %d %s, want %d", tc.method, tc.path, code, body, tc.want)
			}
			if !strings.Contains(body, `"kind":"Status"`) {
				t.Errorf("%s %s: want a Status, got %s", tc.method, tc.path, body)
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct {
		scope  [2]string
		legacy bool
	}{{[2]string{"a", "x"}, false}, {[2]string{"*", "*"}, false}, {[2]string{"a", "x"}, true}, {[2]string{"*", "*"}, true}} {
		sc := tc.scope
		d, err := discovery.NewDiscoveryClientForConfig(s.restConfig(server.ScopeURL(sc[0], sc[1])))
		if err != nil {
			t.Fatal(err)
		}
		// Aggregated discovery (what kubectl asks for first), or one
		// request per group version.
		d.UseLegacyDiscovery = tc.legacy
		_, lists, err := d.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range lists {
			for _, r := range l.APIResources {
				got = append(got, l.GroupVersion+"/"+r.Name+" "+strings.Join(r.Verbs, ","))
			}
		}
		sort.Strings(got)
		verbs := "create,delete,deletecollection,get,list,update,watch"
		if sc[0] == "*" {
			verbs = "list,watch"
		}
		var want []string
		for _, r := range []string{
			"apis.kcp.io/v1alpha1/apiexportendpointslices", "apis.kcp.io/v1alpha1/apiexports", "apis.kcp.io/v1alpha1/apiresourceschemas",
			"core.kcp.io/v1alpha1/logicalclusters", "core.kcp.io/v1alpha1/shards",
			"rbac.authorization.k8s.io/v1/clusterrolebindings", "rbac.authorization.k8s.io/v1/clusterroles",
			"scheduling.kcp.io/v1alpha1/locations", "tenancy.kcp.io/v1alpha1/workspacetypes", "workload.kcp.io/v1alpha1/synctargets",
		} {
			want = append(want, r+" "+verbs)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("discovery at %v, legacy %v (-want +got):\n%s", sc, tc.legacy, diff)
		}
	}
}

func TestAggregatedDiscoveryContentType(t *testing.T) {
	s := newTestServer(t)
	client, err := rest.HTTPClientFor(s.restConfig(""))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.config.ServerURL+server.ScopeURL("a", "x")+"/apis", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", discovery.AcceptV2+","+discovery.AcceptV1)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ok, _ := discovery.ContentTypeIsGVK(resp.Header.Get("Content-Type"), schema.GroupVersionKind{Group: "apidiscovery.k8s.io", Version: "v2", Kind: "APIGroupDiscoveryList"}); !ok || resp.StatusCode != http.StatusOK {
		t.Errorf("got %d %s, want 200 and aggregated discovery", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestRestartKeepsData(t *testing.T) {
	root := t.TempDir() + "/cache"
	ports := freeEtcdPorts(t)
	s := startServer(t, root, ports)
	ctx := t.Context()
	role := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRole",
		"metadata":   map[string]interface{}{"name": "system:kcp:apiexport:e:bind", "uid": "u-1"},
		"rules":      []interface{}{map[string]interface{}{"apiGroups": []interface{}{"apis.kcp.io"}, "resources": []interface{}{"apiexports"}, "verbs": []interface{}{"bind"}}},
	}}
	roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	created, err := s.dynamic("root", "root").Resource(roles).Create(ctx, role, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The same name in other clusters and shards.
	for _, sc := range [][2]string{{"root", "root:org"}, {"beta", "root"}} {
		if _, err := s.dynamic(sc[0], sc[1]).Resource(roles).Create(ctx, role.DeepCopy(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.stop()

	s = startServer(t, root, ports)
	send := true
	for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}} {
		list, err := s.dynamic("*", "*").Resource(roles).List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := scoped(list), "beta/root/system:kcp:apiexport:e:bind root/root/system:kcp:apiexport:e:bind root/root:org/system:kcp:apiexport:e:bind"; got != want {
			t.Errorf("list %+v after restart: got %q, want %q", opts, got, want)
		}
	}
	w, err := s.dynamic("*", "*").Resource(roles).Watch(ctx, metav1.ListOptions{SendInitialEvents: &send, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	expectEvents(t, w, []string{"ADDED system:kcp:apiexport:e:bind", "ADDED system:kcp:apiexport:e:bind", "ADDED system:kcp:apiexport:e:bind"})
	w.Stop()
	got, err := s.dynamic("root", "root").Resource(roles).Get(ctx, role.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created.Object, got.Object); diff != "" {
		t.Errorf("after restart (-before +after):\n%s", diff)
	}
}

// names are the sorted names of a list's items.
func names(l *unstructured.UnstructuredList) string {
	var out []string
	for _, i := range l.Items {
		out = append(out, i.GetName())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// scoped are the sorted shard/cluster/name of a list's items, from their
// annotations.
func scoped(l *unstructured.UnstructuredList) string {
	var out []string
	for _, i := range l.Items {
		a := i.GetAnnotations()
		out = append(out, a["kcp.io/shard"]+"/"+a["kcp.io/cluster"]+"/"+i.GetName())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// expectEvents waits for the watch's next events (bookmarks aside) and
// compares them, in order, as "<type> <name>".
func expectEvents(t *testing.T, w watch.Interface, want []string) {
	t.Helper()
	var got []string
	timeout := time.After(30 * time.Second)
	for len(got) < len(want) {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %q, want %q", got, want)
			}
			if e.Type == watch.Bookmark {
				continue
			}
			if e.Type == watch.Error {
				t.Fatalf("watch error: %v", apierrors.FromObject(e.Object))
			}
			got = append(got, fmt.Sprintf("%s %s", e.Type, e.Object.(*unstructured.Unstructured).GetName()))
		case <-timeout:
			t.Fatalf("watch events: got %q, want %q", got, want)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watch events (-want +got):\n%s", diff)
	}
}

func get(t *testing.T, cfg *rest.Config, path string) (int, string) {
	return do(t, cfg, http.MethodGet, path, "")
}

func do(t *testing.T, cfg *rest.Config, method, path, body string) (int, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, strings.TrimSuffix(cfg.Host, "/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, strings.Join(strings.Fields(b.String()), "")
}

func TestWatchListBookmark(t *testing.T) {
	s := newTestServer(t)
	ctx := t.Context()
	for _, n := range []string{"a1", "a2"} {
		if _, err := s.dynamic("a", "x").Resource(apiExports).Create(ctx, apiExport(n, "x"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	send := true
	w, err := s.dynamic("*", "*").Resource(apiExports).Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	timeout := time.After(30 * time.Second)
	for len(got) < 3 {
		select {
		case e := <-w.ResultChan():
			u := e.Object.(*unstructured.Unstructured)
			if e.Type == watch.Bookmark {
				got = append(got, fmt.Sprintf("BOOKMARK %s", u.GetAnnotations()[metav1.InitialEventsAnnotationKey]))
				continue
			}
			got = append(got, fmt.Sprintf("%s %s", e.Type, u.GetName()))
		case <-timeout:
			t.Fatalf("got %q", got)
		}
	}
	if diff := cmp.Diff([]string{"ADDED a1", "ADDED a2", "BOOKMARK true"}, got); diff != "" {
		t.Errorf("watch-list events (-want +got):\n%s", diff)
	}
}

// TestExternalEtcdAndCA runs the cache server on an external etcd, with a
// serving certificate and a client CA of its own: nothing is generated,
// clients of the given CA in system:masters are let in, and replicas are
// stored under /cache/<group>/<resource>/<shard>/<cluster>/<name>.
func TestExternalEtcdAndCA(t *testing.T) {
	dir := t.TempDir()
	caPair := certs.Pair{CertFile: filepath.Join(dir, "ca.crt"), KeyFile: filepath.Join(dir, "ca.key")}
	ca, caKey, err := certs.EnsureCA(caPair)
	if err != nil {
		t.Fatal(err)
	}
	serving := certs.Pair{CertFile: filepath.Join(dir, "serving.crt"), KeyFile: filepath.Join(dir, "serving.key")}
	if err := certs.EnsureServing(serving, ca, caKey, []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	admin := certs.Pair{CertFile: filepath.Join(dir, "shard.crt"), KeyFile: filepath.Join(dir, "shard.key")}
	if err := certs.EnsureClient(admin, ca, caKey, "system:shard:root", []string{"system:masters"}); err != nil {
		t.Fatal(err)
	}
	etcdURL := etcdtest.Start(t)
	root := filepath.Join(dir, "root")
	s := startServerWith(t, root, etcdPorts{}, func(o *options.Options) {
		o.EtcdServers = []string{etcdURL}
		o.TLSCertFile, o.TLSPrivateKeyFile = serving.CertFile, serving.KeyFile
		o.ClientCAFile = caPair.CertFile
	}, &rest.TLSClientConfig{CAFile: caPair.CertFile, CertFile: admin.CertFile, KeyFile: admin.KeyFile})

	ctx := t.Context()
	if _, err := s.dynamic("root", "root:org").Resource(apiExports).Create(ctx, apiExport("e", "root:org"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Get(ctx, "/cache/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	if diff := cmp.Diff([]string{"/cache/apis.kcp.io/apiexports/root/root:org/e"}, keys); diff != "" {
		t.Errorf("etcd keys (-want +got):\n%s", diff)
	}
	for _, f := range []string{"certs", "cache.kubeconfig", "etcd-server"} {
		if _, err := os.Stat(filepath.Join(root, f)); !os.IsNotExist(err) {
			t.Errorf("%s was created in the root directory (%v)", f, err)
		}
	}
	// A client of the generated CA of another cache server is not let in.
	other := newTestServer(t)
	foreign := s.restConfig("")
	foreign.CertFile, foreign.KeyFile = other.config.Files.Admin.CertFile, other.config.Files.Admin.KeyFile
	if code, body := get(t, foreign, "/readyz"); code != http.StatusUnauthorized {
		t.Errorf("foreign client certificate: got %d %s, want 401", code, body)
	}
}

// TestPeriodicBookmarks: with the watch cache, a watch that allows
// bookmarks learns before its timeout that the resource moved on, through
// a bookmark, when what moved is outside of its shard or cluster.
func TestPeriodicBookmarks(t *testing.T) {
	s := newTestServer(t)
	ctx := t.Context()
	if _, err := s.dynamic("a", "x").Resource(apiExports).Create(ctx, apiExport("e", "x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, sc := range [][2]string{{"a", "x"}, {"*", "x"}, {"a", "*"}} {
		list, err := s.dynamic(sc[0], sc[1]).Resource(apiExports).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		timeout := int64(5)
		w, err := s.dynamic(sc[0], sc[1]).Resource(apiExports).Watch(ctx, metav1.ListOptions{
			ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true, TimeoutSeconds: &timeout,
		})
		if err != nil {
			t.Fatal(err)
		}
		// A write the watch does not see.
		other, err := s.dynamic("b", "y").Resource(apiExports).Create(ctx, apiExport(fmt.Sprintf("other-%d", i), "y"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		deadline := time.After(20 * time.Second)
	events:
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					break events
				}
				u := e.Object.(*unstructured.Unstructured)
				got = append(got, string(e.Type))
				if e.Type == watch.Bookmark {
					if rv(t, u) < rv(t, other) {
						t.Errorf("%v: bookmark at %s, before the write at %s", sc, u.GetResourceVersion(), other.GetResourceVersion())
					}
					break events
				}
			case <-deadline:
				break events
			}
		}
		w.Stop()
		if diff := cmp.Diff([]string{"BOOKMARK"}, got); diff != "" {
			t.Errorf("%v: events before the watch's timeout (-want +got):\n%s", sc, diff)
		}
	}
}

func rv(t *testing.T, u *unstructured.Unstructured) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", u.GetResourceVersion(), err)
	}
	return v
}
