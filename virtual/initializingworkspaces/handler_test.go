package initializingworkspaces_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
)

var lcGVR = corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters")

const (
	mine   corev1alpha1.LogicalClusterInitializer = "root:mytype"
	theirs corev1alpha1.LogicalClusterInitializer = "root:othertype"
)

// users of the test filter, by bearer token.
var users = map[string]*user.DefaultInfo{
	"alice-token": {Name: "alice", Groups: []string{user.AllAuthenticated}},
	"carol-token": {Name: "carol", Groups: []string{user.AllAuthenticated}},
	"bob-token":   {Name: "bob", Groups: []string{user.AllAuthenticated}},
	"admin-token": {Name: "admin", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}},
}

// grants says who may initialize which type: alice root:mytype, carol
// root:othertype.
var grants = map[string]string{"alice": "mytype", "carol": "othertype"}

// env is a shard and the virtual workspace handler served in front of it.
type env struct {
	shard *framework.Shard
	url   string

	mu    sync.Mutex
	asked []string // authorizer calls: user cluster verb resource name
}

// setup starts a shard and serves the handler in front of it. With cached,
// the handler reads LogicalClusters from a wildcard informer on the shard,
// as in the shard itself.
func setup(t *testing.T, cached bool) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a shard")
	}
	e := &env{shard: framework.StartShard(t)}
	var lookup func(logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	if cached {
		all := dyn(t, e.shard.Config(logicalcluster.Wildcard))
		informer := informers.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return all.List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return all.Watch(ctx, opts)
			},
		}, &unstructured.Unstructured{}, 0, nil)
		go informer.RunWithContext(t.Context())
		if !cache.WaitForCacheSync(t.Context().Done(), informer.HasSynced) {
			t.Fatal("the LogicalCluster informer did not sync")
		}
		lister := informers.NewLister[*unstructured.Unstructured](informer.GetIndexer(), corev1alpha1.Resource("logicalclusters"))
		lookup = func(n logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			u, err := lister.Cluster(n).Get(corev1alpha1.LogicalClusterName)
			if err != nil {
				return nil, err
			}
			lc := &corev1alpha1.LogicalCluster{}
			return lc, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, lc)
		}
	}
	authz := authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		c, _ := logicalcluster.ClusterFrom(ctx)
		e.mu.Lock()
		e.asked = append(e.asked, strings.Join([]string{a.GetUser().GetName(), string(c.Name), a.GetVerb(), a.GetAPIGroup(), a.GetResource(), a.GetName()}, " "))
		e.mu.Unlock()
		if c.Name == "root" && a.GetVerb() == "initialize" && a.GetAPIGroup() == "tenancy.kcp.io" && a.GetResource() == "workspacetypes" &&
			a.IsResourceRequest() && grants[a.GetUser().GetName()] == a.GetName() {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no grant in this test", nil
	})
	h, err := initializingworkspaces.New(initializingworkspaces.Config{Loopback: e.shard.Config(""), Authorizer: authz, LogicalCluster: lookup})
	if err != nil {
		t.Fatal(err)
	}
	// The test filter stands for the shard's authentication.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// config addresses the virtual workspace of in at cluster as the user of token.
func (e *env) config(token string, in corev1alpha1.LogicalClusterInitializer, cluster string) *rest.Config {
	return &rest.Config{
		Host:            e.url + initializingworkspaces.URLFor(in) + "/clusters/" + cluster,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             100, Burst: 200,
	}
}

func dyn(t *testing.T, cfg *rest.Config) dynamic.NamespaceableResourceInterface {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.Resource(lcGVR)
}

// raw sends a request to the virtual workspace and returns the status code
// and body.
func (e *env) raw(t *testing.T, method, path, token, contentType, accept string, body []byte, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// createLogicalCluster creates a logical cluster waiting for initializers,
// as the shard admin.
func (e *env) createLogicalCluster(t *testing.T, name string, labels map[string]string, initializers ...corev1alpha1.LogicalClusterInitializer) {
	t.Helper()
	lc := &corev1alpha1.LogicalCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: corev1alpha1.SchemeGroupVersion.String(), Kind: "LogicalCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName, Labels: labels},
		Spec:       corev1alpha1.LogicalClusterSpec{Initializers: initializers},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(lc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn(t, e.shard.Config(logicalcluster.Name(name))).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating logical cluster %s: %v", name, err)
	}
}

// adminGet reads a LogicalCluster directly on the shard.
func (e *env) adminGet(t *testing.T, name string) *corev1alpha1.LogicalCluster {
	t.Helper()
	u, err := dyn(t, e.shard.Config(logicalcluster.Name(name))).Get(t.Context(), corev1alpha1.LogicalClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return typed(t, u)
}

func typed(t *testing.T, u *unstructured.Unstructured) *corev1alpha1.LogicalCluster {
	t.Helper()
	lc := &corev1alpha1.LogicalCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, lc); err != nil {
		t.Fatal(err)
	}
	return lc
}

// clustersOf returns the sorted logical clusters of a list.
func clustersOf(items []unstructured.Unstructured) []string {
	var out []string
	for i := range items {
		out = append(out, string(logicalcluster.From(&items[i])))
	}
	slices.Sort(out)
	return out
}

// kubectl runs kubectl against the virtual workspace of in at cluster.
func (e *env) kubectl(t *testing.T, token string, in corev1alpha1.LogicalClusterInitializer, cluster string, args ...string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return exec.Command(framework.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache"),
		"--server", e.url + initializingworkspaces.URLFor(in) + "/clusters/" + cluster, "--token", token, "--insecure-skip-tls-verify"}, args...)...)
}

func (e *env) listAs(t *testing.T, token string, in corev1alpha1.LogicalClusterInitializer, opts metav1.ListOptions) []string {
	t.Helper()
	l, err := dyn(t, e.config(token, in, "*")).List(t.Context(), opts)
	if err != nil {
		t.Fatalf("listing as %s: %v", token, err)
	}
	return clustersOf(l.Items)
}

func status(t *testing.T, body []byte) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" {
		t.Fatalf("not a Status (%v): %s", err, body)
	}
	return st
}

func mustEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

// nextEvent waits for a watch event of cluster that matches.
func nextEvent(t *testing.T, w watch.Interface, cluster string, match func(watch.Event) bool) watch.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed while waiting for an event of %s", cluster)
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			if isObj && string(logicalcluster.From(u)) == cluster && match(ev) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no matching watch event of %s", cluster)
		}
	}
}

func statusPath(in corev1alpha1.LogicalClusterInitializer, cluster string) string {
	return initializingworkspaces.URLFor(in) + "/clusters/" + cluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status"
}

func TestInitializingWorkspaces(t *testing.T) {
	e := setup(t, true)
	e.createLogicalCluster(t, "init-a", map[string]string{"team": "a"}, mine, theirs)
	e.createLogicalCluster(t, "init-b", nil, mine)
	e.createLogicalCluster(t, "init-c", nil, theirs)
	e.createLogicalCluster(t, "init-d", nil, mine, theirs)
	e.createLogicalCluster(t, "init-e", nil, mine)
	e.createLogicalCluster(t, "ready", nil)

	t.Run("list shows exactly the logical clusters waiting for the initializer", func(t *testing.T) {
		mustEqual(t, "alice's clusters", e.listAs(t, "alice-token", mine, metav1.ListOptions{}), []string{"init-a", "init-b", "init-d", "init-e"})
		mustEqual(t, "carol's clusters", e.listAs(t, "carol-token", theirs, metav1.ListOptions{}), []string{"init-a", "init-c", "init-d"})
		mustEqual(t, "with the client's selector", e.listAs(t, "alice-token", mine, metav1.ListOptions{LabelSelector: "team=a"}), []string{"init-a"})
		mustEqual(t, "with a selector nobody matches", e.listAs(t, "alice-token", mine, metav1.ListOptions{LabelSelector: "team in (x,y)"}), []string(nil))
		// The escaped form of the initializer addresses the same workspace.
		code, body := e.raw(t, http.MethodGet, "/services/initializingworkspaces/root%3Amytype/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters", "alice-token", "", "", nil)
		mustEqual(t, "escaped initializer", code, http.StatusOK)
		var l unstructured.UnstructuredList
		if err := l.UnmarshalJSON(body); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "escaped initializer's clusters", clustersOf(l.Items), []string{"init-a", "init-b", "init-d", "init-e"})
	})

	t.Run("authorization", func(t *testing.T) {
		e.mu.Lock()
		e.asked = nil
		e.mu.Unlock()
		for _, tc := range []struct {
			token string
			in    corev1alpha1.LogicalClusterInitializer
			code  int
		}{
			{"bob-token", mine, http.StatusForbidden},
			{"carol-token", mine, http.StatusForbidden},
			{"alice-token", theirs, http.StatusForbidden},
			{"alice-token", corev1alpha1.OwnerInitializer, http.StatusForbidden},
			{"admin-token", corev1alpha1.OwnerInitializer, http.StatusOK},
			{"alice-token", mine, http.StatusOK},
		} {
			code, body := e.raw(t, http.MethodGet, initializingworkspaces.URLFor(tc.in)+"/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters", tc.token, "", "", nil)
			if code != tc.code {
				t.Errorf("%s listing for %s: %d, want %d: %s", tc.token, tc.in, code, tc.code, body)
			}
			if tc.code != http.StatusOK {
				if st := status(t, body); st.Reason != metav1.StatusReasonForbidden {
					t.Errorf("%s listing for %s: reason %q", tc.token, tc.in, st.Reason)
				}
			}
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if !slices.Contains(e.asked, "alice root initialize tenancy.kcp.io workspacetypes mytype") {
			t.Errorf("the authorizer was not asked about alice in root: %q", e.asked)
		}
	})

	t.Run("bad paths and initializers", func(t *testing.T) {
		for _, tc := range []struct {
			path string
			code int
		}{
			{"/services/initializingworkspaces/Not_Valid/clusters/*/apis", http.StatusBadRequest},
			{"/services/initializingworkspaces/root:mytype", http.StatusNotFound},
			{"/services/initializingworkspaces/root:mytype/nope", http.StatusNotFound},
			{"/services/initializingworkspaces/root:mytype/clusters/*/api/v1/configmaps", http.StatusNotFound},
			{"/services/initializingworkspaces/root:mytype/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", http.StatusBadRequest},
			{"/services/initializingworkspaces/root:mytype/clusters/init-a/apis/core.kcp.io/v1alpha1/logicalclusters/other", http.StatusNotFound},
			{"/services/initializingworkspaces/root:mytype/clusters/init-a/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/scale", http.StatusNotFound},
			{"/services/initializingworkspaces/root:mytype/clusters/init-a/api/v1/../../../init-c/api/v1/namespaces", http.StatusNotFound},
		} {
			code, body := e.raw(t, http.MethodGet, tc.path, "alice-token", "", "", nil)
			if code != tc.code {
				t.Errorf("GET %s: %d, want %d: %s", tc.path, code, tc.code, body)
				continue
			}
			status(t, body)
		}
		code, body := e.raw(t, http.MethodDelete, initializingworkspaces.URLFor(mine)+"/clusters/init-a/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", "alice-token", "", "", nil)
		mustEqual(t, "DELETE of the LogicalCluster", code, http.StatusMethodNotAllowed)
		status(t, body)
	})

	t.Run("escaped separators do not reach the LogicalCluster", func(t *testing.T) {
		before := e.adminGet(t, "init-a")
		base := initializingworkspaces.URLFor(mine) + "/clusters/init-a/apis/core.kcp.io/v1alpha1/"
		withURL := fmt.Sprintf(`{"apiVersion":"core.kcp.io/v1alpha1","kind":"LogicalCluster","metadata":{"name":"cluster","resourceVersion":%q},"status":{"URL":"https://evil","phase":"Ready"}}`, before.ResourceVersion)
		for _, tc := range []struct {
			method, path, contentType, body string
			code                            int
		}{
			{http.MethodDelete, "logicalclusters%2Fcluster", "", "", http.StatusBadRequest},
			{http.MethodDelete, "logicalclusters%2fcluster", "", "", http.StatusBadRequest},
			{http.MethodPut, "logicalclusters%2Fcluster%2Fstatus", "application/json", withURL, http.StatusBadRequest},
			{http.MethodPut, "logicalclusters%2Fcluster", "application/json", withURL, http.StatusBadRequest},
			{http.MethodPatch, "logicalclusters%2Fcluster%2Fstatus", "application/merge-patch+json", `{"status":{"initializers":[]}}`, http.StatusBadRequest},
			{http.MethodDelete, "logicalclusters%5Ccluster", "", "", http.StatusBadRequest},
			{http.MethodDelete, "logicalclusters%252Fcluster", "", "", http.StatusBadRequest},
			{http.MethodDelete, "namespaces/x/logicalclusters/cluster", "", "", http.StatusForbidden},
			{http.MethodDelete, "watch/logicalclusters/cluster", "", "", http.StatusMethodNotAllowed},
		} {
			code, body := e.raw(t, tc.method, base+tc.path, "alice-token", tc.contentType, "", []byte(tc.body))
			if code != tc.code {
				t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, code, tc.code, body)
				continue
			}
			status(t, body)
		}
		after := e.adminGet(t, "init-a")
		mustEqual(t, "resourceVersion of init-a", after.ResourceVersion, before.ResourceVersion)
		mustEqual(t, "initializers of init-a", after.Status.Initializers, []corev1alpha1.LogicalClusterInitializer{mine, theirs})
	})

	t.Run("discovery and kubectl", func(t *testing.T) {
		dc, err := discovery.NewDiscoveryClientForConfig(e.config("alice-token", mine, "*"))
		if err != nil {
			t.Fatal(err)
		}
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range lists {
			for _, r := range l.APIResources {
				names = append(names, l.GroupVersion+"/"+r.Name)
			}
		}
		mustEqual(t, "discovered resources", names, []string{"core.kcp.io/v1alpha1/logicalclusters", "core.kcp.io/v1alpha1/logicalclusters/status"})

		cmd := e.kubectl(t, "alice-token", mine, "*", "get", "logicalclusters", "--sort-by", "{.metadata.annotations.kcp\\.io/cluster}",
			"-o", "custom-columns=CLUSTER:.metadata.annotations.kcp\\.io/cluster,PHASE:.status.phase")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get: %v\n%s", err, out)
		}
		mustEqual(t, "kubectl get", strings.Fields(string(out)), []string{"CLUSTER", "PHASE", "init-a", "Initializing", "init-b", "Initializing", "init-d", "Initializing", "init-e", "Initializing"})

		// Server-side table output (plain kubectl get) passes through.
		code, body := e.raw(t, http.MethodGet, initializingworkspaces.URLFor(mine)+"/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters", "alice-token", "",
			"application/json;as=Table;v=v1;g=meta.k8s.io", nil)
		mustEqual(t, "table status", code, http.StatusOK)
		var table metav1.Table
		if err := json.Unmarshal(body, &table); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "table kind and rows", fmt.Sprintf("%s %d", table.Kind, len(table.Rows)), "Table 4")
	})

	t.Run("GET of one LogicalCluster", func(t *testing.T) {
		u, err := dyn(t, e.config("alice-token", mine, "init-a")).Get(t.Context(), corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "cluster", logicalcluster.From(u), "init-a")
		if _, err := dyn(t, e.config("alice-token", mine, "init-c")).Get(t.Context(), corev1alpha1.LogicalClusterName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("GET of a logical cluster that does not wait for the initializer: %v, want NotFound", err)
		}
		if _, err := dyn(t, e.config("alice-token", mine, "init-a")).Get(t.Context(), corev1alpha1.LogicalClusterName, metav1.GetOptions{}, "status"); err != nil {
			t.Fatalf("GET of the status: %v", err)
		}
	})

	// From here on, a watch and an informer of alice follow what happens.
	w, err := dyn(t, e.config("alice-token", mine, "*")).Watch(t.Context(), metav1.ListOptions{AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// A shard informer (client-go's, keyed by cluster|name) follows them too.
	lcs := dyn(t, e.config("alice-token", mine, "*"))
	informer := informers.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return lcs.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return lcs.Watch(ctx, opts)
		},
	}, &unstructured.Unstructured{}, 0, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	informerClusters := func() []string {
		var out []string
		for _, o := range informer.GetStore().List() {
			out = append(out, string(logicalcluster.From(o.(*unstructured.Unstructured))))
		}
		slices.Sort(out)
		return out
	}
	mustEqual(t, "informer", informerClusters(), []string{"init-a", "init-b", "init-d", "init-e"})

	t.Run("content of an initializing workspace", func(t *testing.T) {
		kc, err := kubernetes.NewForConfig(e.config("alice-token", mine, "init-b"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kc.Discovery().ServerGroups(); err != nil {
			t.Fatalf("discovery of an initializing workspace: %v", err)
		}
		// The shard creates the default namespace only in Ready clusters.
		if _, err := kc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "seed"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := kc.CoreV1().ConfigMaps("seed").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seeded"}, Data: map[string]string{"by": "alice"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		admin, err := kubernetes.NewForConfig(e.shard.Config("init-b"))
		if err != nil {
			t.Fatal(err)
		}
		cm, err := admin.CoreV1().ConfigMaps("seed").Get(t.Context(), "seeded", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the configmap is not in the logical cluster: %v", err)
		}
		mustEqual(t, "configmap data", cm.Data["by"], "alice")
		// The client's impersonation headers do not reach the shard, which
		// would otherwise take them for the proxy's own.
		code, body := e.raw(t, http.MethodGet, initializingworkspaces.URLFor(mine)+"/clusters/init-b/api/v1/namespaces/seed/configmaps/seeded", "alice-token", "", "", nil, "Impersonate-User", "nobody")
		mustEqual(t, "GET with an impersonation header", code, http.StatusOK)
		mustEqual(t, "configmap name", strings.Contains(string(body), `"name":"seeded"`), true)
		// The shard sees the initializer as an administrator of the
		// workspace, not as one of its own admins.
		review, err := kc.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("self subject review through the virtual workspace: %v", err)
		}
		mustEqual(t, "user on the shard", review.Status.UserInfo.Username, "system:kcp:initializer:root:mytype")
		if groups := review.Status.UserInfo.Groups; !slices.Contains(groups, "system:kcp:clusterworkspace:admin") || slices.Contains(groups, user.SystemPrivilegedGroup) {
			t.Errorf("groups on the shard: %q", groups)
		}
		// Only the API is served, and LogicalClusters only at their own
		// endpoints.
		for _, tc := range []struct {
			method, path string
			code         int
		}{
			{http.MethodGet, "/version", http.StatusOK},
			{http.MethodGet, "/openapi/v2", http.StatusOK},
			{http.MethodGet, "/apis/rbac.authorization.k8s.io/v1", http.StatusOK},
			{http.MethodGet, "/healthz", http.StatusNotFound},
			{http.MethodGet, "/metrics", http.StatusNotFound},
			{http.MethodGet, "", http.StatusNotFound},
			{http.MethodPost, "/apis", http.StatusMethodNotAllowed},
			{http.MethodGet, "/apis/core.kcp.io/v1alpha1/namespaces/seed/logicalclusters", http.StatusForbidden},
		} {
			code, body := e.raw(t, tc.method, initializingworkspaces.URLFor(mine)+"/clusters/init-b"+tc.path, "alice-token", "", "application/json", nil)
			if code != tc.code {
				t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, code, tc.code, body)
			} else if code != http.StatusOK {
				status(t, body)
			}
		}
		// What only the shard's own admins may do stays refused: a
		// Workspace placed on a logical cluster of the caller's choosing.
		// (Workspaces need the type of their parent.)
		typed := []byte(`{"metadata":{"annotations":{"` + corev1alpha1.LogicalClusterTypeAnnotationKey + `":"root:universal"}}}`)
		if _, err := dyn(t, e.shard.Config("init-b")).Patch(t.Context(), corev1alpha1.LogicalClusterName, types.MergePatchType, typed, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		// Workspaces are served where tenancy.kcp.io is bound.
		kcp, err := kcpclient.NewForConfig(e.shard.Config("init-b"))
		if err != nil {
			t.Fatal(err)
		}
		binding := &apisv1alpha1.APIBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "tenancy.kcp.io"},
			Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
				Export: &apisv1alpha1.ExportBindingReference{Path: "root", Name: "tenancy.kcp.io"},
			}},
		}
		if _, err := kcp.APIBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tenancy, err := dynamic.NewForConfig(e.config("alice-token", mine, "init-b"))
		if err != nil {
			t.Fatal(err)
		}
		ws := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace",
			"metadata": map[string]any{"name": "placed"},
			"spec":     map[string]any{"cluster": "init-c"},
		}}
		// The admission reads the type from a cache, which may lag.
		eventually(t, "a Workspace with spec.cluster to be Forbidden on spec.cluster", func(ctx context.Context) (bool, error) {
			_, err := tenancy.Resource(tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaces")).Create(ctx, ws, metav1.CreateOptions{})
			if err == nil {
				t.Fatal("a Workspace with spec.cluster was created through the virtual workspace")
			}
			return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "spec.cluster can only be set by the system"), err
		})
		// Another initializer's workspace stays closed.
		other, err := kubernetes.NewForConfig(e.config("alice-token", mine, "init-c"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("content of a logical cluster that does not wait for alice: %v, want Forbidden", err)
		}
	})

	t.Run("another initializer's removal is a MODIFIED event", func(t *testing.T) {
		patch := `[{"op":"test","path":"/status/initializers","value":["root:mytype","root:othertype"]},{"op":"replace","path":"/status/initializers","value":["root:mytype"]}]`
		if _, err := dyn(t, e.config("carol-token", theirs, "init-a")).Patch(t.Context(), corev1alpha1.LogicalClusterName, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("carol removing her initializer: %v", err)
		}
		ev := nextEvent(t, w, "init-a", func(ev watch.Event) bool {
			return ev.Type == watch.Modified && fmt.Sprint(typed(t, ev.Object.(*unstructured.Unstructured)).Status.Initializers) == "[root:mytype]"
		})
		mustEqual(t, "phase", typed(t, ev.Object.(*unstructured.Unstructured)).Status.Phase, corev1alpha1.LogicalClusterPhaseInitializing)
		mustEqual(t, "carol's clusters", e.listAs(t, "carol-token", theirs, metav1.ListOptions{}), []string{"init-c", "init-d"})
	})

	t.Run("an initializer cannot touch other initializers or the phase", func(t *testing.T) {
		client := dyn(t, e.config("alice-token", mine, "init-d"))
		before := e.adminGet(t, "init-d")
		for _, tc := range []struct {
			name  string
			typ   types.PatchType
			patch string
			check func(error) bool
		}{
			{"remove all", types.MergePatchType, `{"status":{"initializers":[]}}`, apierrors.IsForbidden},
			{"remove the other", types.JSONPatchType, `[{"op":"remove","path":"/status/initializers/1"}]`, apierrors.IsForbidden},
			{"add one", types.MergePatchType, `{"status":{"initializers":["root:mytype","root:othertype","root:third"]}}`, apierrors.IsForbidden},
			{"replace itself", types.MergePatchType, `{"status":{"initializers":["root:othertype","root:third"]}}`, apierrors.IsForbidden},
			{"set the phase", types.MergePatchType, `{"status":{"phase":"Unavailable"}}`, apierrors.IsForbidden},
			{"set the URL", types.MergePatchType, `{"status":{"URL":"https://evil.example.com"}}`, apierrors.IsForbidden},
			{"remove itself and set the URL", types.MergePatchType, `{"status":{"initializers":["root:othertype"],"URL":"https://evil.example.com"}}`, apierrors.IsForbidden},
			{"add a condition", types.JSONPatchType, `[{"op":"add","path":"/status/conditions","value":[{"type":"Ready","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z"}]}]`, apierrors.IsForbidden},
			{"set a label", types.MergePatchType, `{"metadata":{"labels":{"x":"y"}},"status":{"initializers":["root:othertype"]}}`, apierrors.IsForbidden},
			{"strategic merge patch", types.StrategicMergePatchType, `{"status":{"initializers":["root:othertype"]}}`, apierrors.IsUnsupportedMediaType},
			{"stale resourceVersion", types.MergePatchType, `{"metadata":{"resourceVersion":"1"},"status":{"initializers":["root:othertype"]}}`, apierrors.IsConflict},
			{"failing test operation", types.JSONPatchType, `[{"op":"test","path":"/status/phase","value":"Ready"}]`, apierrors.IsInvalid},
		} {
			_, err := client.Patch(t.Context(), corev1alpha1.LogicalClusterName, tc.typ, []byte(tc.patch), metav1.PatchOptions{}, "status")
			if !tc.check(err) {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
		_, err := client.Patch(t.Context(), corev1alpha1.LogicalClusterName, types.MergePatchType, []byte(`{"status":{"initializers":[]}}`), metav1.PatchOptions{}, "status")
		if msg := err.Error(); !strings.Contains(msg, `initializer "root:mytype" may only remove itself`) || !strings.Contains(msg, "root:othertype") {
			t.Errorf("unclear message: %s", msg)
		}
		_, err = client.Patch(t.Context(), corev1alpha1.LogicalClusterName, types.MergePatchType, []byte(`{"status":{"URL":"https://evil.example.com"}}`), metav1.PatchOptions{}, "status")
		if msg := fmt.Sprint(err); !strings.Contains(msg, `initializer "root:mytype" may only remove itself from status.initializers, it cannot change status.URL`) {
			t.Errorf("unclear message: %s", msg)
		}
		cfg := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
			"metadata": map[string]any{"name": "cluster"},
			"status":   map[string]any{"initializers": []any{"root:othertype"}, "URL": "https://evil.example.com"},
		}}
		if _, err := client.ApplyStatus(t.Context(), corev1alpha1.LogicalClusterName, cfg, metav1.ApplyOptions{FieldManager: "alice", Force: true}); !apierrors.IsForbidden(err) {
			t.Errorf("apply setting the URL: %v, want Forbidden", err)
		}
		lc := e.adminGet(t, "init-d")
		mustEqual(t, "initializers of init-d", lc.Status.Initializers, []corev1alpha1.LogicalClusterInitializer{mine, theirs})
		mustEqual(t, "URL of init-d", lc.Status.URL, before.Status.URL)
		mustEqual(t, "conditions of init-d", len(lc.Status.Conditions), 0)
	})

	t.Run("removing the last initializer makes the cluster Ready and ends access", func(t *testing.T) {
		if _, err := dyn(t, e.config("alice-token", mine, "init-a")).Patch(t.Context(), corev1alpha1.LogicalClusterName, types.MergePatchType,
			[]byte(`{"status":{"initializers":[]}}`), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("alice removing her initializer: %v", err)
		}
		nextEvent(t, w, "init-a", func(ev watch.Event) bool { return ev.Type == watch.Deleted })
		lc := e.adminGet(t, "init-a")
		mustEqual(t, "phase", lc.Status.Phase, corev1alpha1.LogicalClusterPhaseReady)
		mustEqual(t, "initializers", len(lc.Status.Initializers), 0)
		eventually(t, "the informer to drop init-a", func(context.Context) (bool, error) {
			return fmt.Sprint(informerClusters()) == "[init-b init-d init-e]", nil
		})
		// The handler's cache may lag for a moment.
		eventually(t, "GET after initialization to be NotFound", func(ctx context.Context) (bool, error) {
			_, err := dyn(t, e.config("alice-token", mine, "init-a")).Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
		// A second removal finds nothing to remove.
		if _, err := dyn(t, e.config("alice-token", mine, "init-a")).Patch(t.Context(), corev1alpha1.LogicalClusterName, types.MergePatchType,
			[]byte(`{"status":{"initializers":[]}}`), metav1.PatchOptions{}, "status"); !apierrors.IsNotFound(err) {
			t.Fatalf("patch after initialization: %v, want NotFound", err)
		}
	})

	t.Run("server-side apply removes the initializer", func(t *testing.T) {
		cfg := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
			"metadata": map[string]any{"name": "cluster"},
			"status":   map[string]any{"initializers": []any{"root:othertype"}},
		}}
		client := dyn(t, e.config("alice-token", mine, "init-b"))
		if _, err := client.ApplyStatus(t.Context(), corev1alpha1.LogicalClusterName, cfg, metav1.ApplyOptions{FieldManager: "alice", Force: true}); !apierrors.IsForbidden(err) {
			t.Fatalf("apply adding an initializer: %v, want Forbidden", err)
		}
		cfg.Object["status"] = map[string]any{"initializers": []any{}}
		if _, err := client.ApplyStatus(t.Context(), corev1alpha1.LogicalClusterName, cfg, metav1.ApplyOptions{FieldManager: "alice", Force: true, DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry-run apply: %v", err)
		}
		mustEqual(t, "phase after a dry run", e.adminGet(t, "init-b").Status.Phase, corev1alpha1.LogicalClusterPhaseInitializing)
		if _, err := client.ApplyStatus(t.Context(), corev1alpha1.LogicalClusterName, cfg, metav1.ApplyOptions{FieldManager: "alice", Force: true}); err != nil {
			t.Fatalf("apply: %v", err)
		}
		mustEqual(t, "phase", e.adminGet(t, "init-b").Status.Phase, corev1alpha1.LogicalClusterPhaseReady)
		nextEvent(t, w, "init-b", func(ev watch.Event) bool { return ev.Type == watch.Deleted })
		kc, err := kubernetes.NewForConfig(e.config("alice-token", mine, "init-b"))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "content after initialization to be Forbidden", func(ctx context.Context) (bool, error) {
			_, err := kc.CoreV1().ConfigMaps("seed").Get(ctx, "seeded", metav1.GetOptions{})
			return apierrors.IsForbidden(err), err
		})
	})

	t.Run("update of the status", func(t *testing.T) {
		client := dyn(t, e.config("alice-token", mine, "init-e"))
		u, err := client.Get(t.Context(), corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stale := u.DeepCopy()
		if err := unstructured.SetNestedStringSlice(u.Object, []string{string(theirs)}, "status", "initializers"); err != nil {
			t.Fatal(err)
		}
		if _, err := client.UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("update adding an initializer: %v, want Forbidden", err)
		}
		unstructured.RemoveNestedField(u.Object, "status", "initializers")
		if _, err := client.UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		mustEqual(t, "phase", e.adminGet(t, "init-e").Status.Phase, corev1alpha1.LogicalClusterPhaseReady)
		if _, err := client.UpdateStatus(t.Context(), stale, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("update after initialization: %v, want NotFound", err)
		}
	})

	t.Run("removing itself leaves the others", func(t *testing.T) {
		code, body := e.raw(t, http.MethodPatch, statusPath(mine, "init-d"), "alice-token", string(types.JSONPatchType), "",
			[]byte(`[{"op":"remove","path":"/status/initializers/0"}]`))
		mustEqual(t, "patch status", code, http.StatusOK)
		var lc corev1alpha1.LogicalCluster
		if err := json.Unmarshal(body, &lc); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "initializers", lc.Status.Initializers, []corev1alpha1.LogicalClusterInitializer{theirs})
		mustEqual(t, "phase", lc.Status.Phase, corev1alpha1.LogicalClusterPhaseInitializing)
		mustEqual(t, "carol's clusters", e.listAs(t, "carol-token", theirs, metav1.ListOptions{}), []string{"init-c", "init-d"})
		mustEqual(t, "alice's clusters", e.listAs(t, "alice-token", mine, metav1.ListOptions{}), []string(nil))
	})
}

// TestWatchResumes checks that a watch from a resourceVersion of a list
// sees what happened after the list, and that selectors apply to it.
func TestWatchResumes(t *testing.T) {
	e := setup(t, false)
	e.createLogicalCluster(t, "first", nil, mine)
	client := dyn(t, e.config("alice-token", mine, "*"))
	l, err := client.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "listed", clustersOf(l.Items), []string{"first"})
	e.createLogicalCluster(t, "second", map[string]string{"skip": "yes"}, mine)
	e.createLogicalCluster(t, "third", nil, mine)
	e.createLogicalCluster(t, "fourth", nil, theirs)
	w, err := client.Watch(t.Context(), metav1.ListOptions{ResourceVersion: l.GetResourceVersion(), LabelSelector: "skip!=yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.createLogicalCluster(t, "fifth", nil, mine)
	// Events come in the order of the writes: second and fourth, had they
	// passed the selectors, would come before fifth.
	var seen []string
	timeout := time.After(30 * time.Second)
	for !slices.Contains(seen, "fifth") {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch closed")
			}
			if u, isObj := ev.Object.(*unstructured.Unstructured); isObj && ev.Type == watch.Added {
				seen = append(seen, string(logicalcluster.From(u)))
			}
		case <-timeout:
			t.Fatalf("no event of fifth, saw %v", seen)
		}
	}
	mustEqual(t, "clusters added after the list", seen, []string{"third", "fifth"})
}

// TestKubectlWatch follows the virtual workspace with kubectl get -w.
func TestKubectlWatch(t *testing.T) {
	e := setup(t, false)
	e.createLogicalCluster(t, "one", nil, mine)
	cmd := e.kubectl(t, "alice-token", mine, "*", "get", "lc", "-w", "--output-watch-events",
		"-o", "custom-columns=EVENT:.type,CLUSTER:.object.metadata.annotations.kcp\\.io/cluster,PHASE:.object.status.phase")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		b := make([]byte, 4096)
		var acc string
		for {
			n, err := out.Read(b)
			acc += string(b[:n])
			for {
				i := strings.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				lines <- strings.Join(strings.Fields(acc[:i]), " ")
				acc = acc[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	var printed []string
	expect := func(want string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl ended before %q, after %q: %s", want, printed, stderr.String())
				}
				printed = append(printed, l)
				if l == want {
					return
				}
			case <-timeout:
				t.Fatalf("kubectl did not print %q, only %q: %s", want, printed, stderr.String())
			}
		}
	}
	expect("ADDED one Initializing")
	e.createLogicalCluster(t, "two", nil, mine, theirs)
	expect("ADDED two Initializing")
	if _, err := dyn(t, e.config("alice-token", mine, "one")).Patch(t.Context(), corev1alpha1.LogicalClusterName, types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/status/initializers/0"}]`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	// A deletion from the selection carries the last object that matched.
	expect("DELETED one Initializing")
}
