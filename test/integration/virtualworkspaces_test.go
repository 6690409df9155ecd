package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/bootstrap"
	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
	vwoptions "github.com/tessera-dev/tessera/virtual/options"
	vwserver "github.com/tessera-dev/tessera/virtual/server"
)

// standaloneVW is a tessera-virtual-workspaces server running in the test
// process, in front of one shard.
type standaloneVW struct {
	URL string
	// CAFile verifies its serving certificate.
	CAFile string
}

// startVirtualWorkspaces starts the standalone virtual workspaces of s
// through the options chain of the binary, on a port of its own, reading
// the shard over HTTPS with its admin kubeconfig (shard-base context);
// client certificates of the shard's CA are accepted. It waits for
// /readyz and stops the server when the test ends.
func startVirtualWorkspaces(t *testing.T, s *framework.Shard, opts ...func(*vwoptions.Options)) *standaloneVW {
	t.Helper()
	o := vwoptions.NewOptions()
	o.RootDirectory = t.TempDir()
	o.SecurePort = 0
	o.Kubeconfig = s.Kubeconfig
	o.Context = "shard-base"
	o.ShardName = "test"
	o.ClientCAFile = filepath.Join(s.Options.RootDirectory, "certs", "ca.crt")
	for _, f := range opts {
		f(o)
	}
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if errs := completed.Validate(); len(errs) > 0 {
		t.Fatalf("options: %v", errs)
	}
	cfg, err := vwserver.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := cfg.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.PrepareRun().Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Logf("virtual workspaces stopped with: %v", err)
			}
		case <-time.After(time.Minute):
			t.Errorf("virtual workspaces did not stop within a minute")
		}
	})
	vw := &standaloneVW{URL: cfg.ServerURL, CAFile: cfg.Files.CA.CertFile}
	client := vw.httpClient(t, nil)
	eventually(t, time.Minute, "the virtual workspaces' /readyz", func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("virtual workspaces exited: %v", err)
		default:
		}
		code, body := get(ctx, client, vw.URL+"/readyz", nil)
		if code != http.StatusOK {
			return false, fmt.Errorf("%d: %s", code, body)
		}
		return true, nil
	})
	return vw
}

// httpClient trusts the server's CA and presents cert, if any.
func (vw *standaloneVW) httpClient(t *testing.T, cert *tls.Certificate) *http.Client {
	t.Helper()
	roots, err := certutil.NewPool(vw.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		tlsConfig.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 30 * time.Second}
}

// tokenConfig returns a client config for path under the server that
// authenticates with a bearer token only.
func (vw *standaloneVW) tokenConfig(path, token string) *rest.Config {
	return &rest.Config{Host: vw.URL + path, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: vw.CAFile}, QPS: 100, Burst: 200}
}

// get returns the status code and body of a GET.
func get(ctx context.Context, client *http.Client, url string, headers http.Header) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	for k, vs := range headers {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStandaloneVirtualWorkspaces runs tessera-virtual-workspaces' server
// beside a shard and uses the apiexport virtual workspace through it: the
// real kubectl with kcp-admin's client certificate lists a consumer's
// object, a token user the shard knows (TokenReview) lists it once the
// provider grants the export's content and gets 403 before, a
// front-proxy's request headers are believed, a watch delivers, and the
// initializing workspaces virtual workspace is served too.
func TestStandaloneVirtualWorkspaces(t *testing.T) {
	proxyCA := newSigner(t, "front-proxy-ca")
	s := framework.StartShard(t, withTokens(t, vwTokens...))
	provider, consumer := exportCowboysForVW(t, s)

	vw := startVirtualWorkspaces(t, s, func(o *vwoptions.Options) {
		o.RequestHeader.ClientCAFile = proxyCA.writeCA(t)
		o.RequestHeader.AllowedNames = []string{"front-proxy"}
	})
	exportPath := "/services/apiexport/" + string(provider) + "/wildwest.dev/clusters/*"

	t.Run("kubectl with a client certificate", func(t *testing.T) {
		out, err := framework.RunKubectl("--kubeconfig", s.Kubeconfig, "--context", "base",
			"--server", vw.URL+exportPath, "--certificate-authority", vw.CAFile,
			"--cache-dir", filepath.Join(t.TempDir(), "kubectl-cache"),
			"get", "cowboys", "-A", "-o", "custom-columns=NAME:.metadata.name,CLUSTER:.metadata.annotations.kcp\\.io/cluster", "--no-headers")
		if err != nil {
			t.Fatalf("kubectl get cowboys through the standalone virtual workspace: %v\n%s", err, out)
		}
		if got, want := strings.Join(strings.Fields(out), " "), "one "+string(consumer); got != want {
			t.Errorf("kubectl get cowboys: got %q, want %q", got, want)
		}
	})

	t.Run("token reviewed by the shard", func(t *testing.T) {
		dyn, err := dynamic.NewForConfig(vw.tokenConfig(exportPath, "reader-token"))
		if err != nil {
			t.Fatal(err)
		}
		list, err := dyn.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("reader lists the export's content: %v", err)
		}
		if got := names(list.Items); strings.Join(got, ",") != "one" || logicalcluster.From(&list.Items[0]) != consumer {
			t.Errorf("reader's list: %v", got)
		}

		// A watch through the standalone server delivers, past the
		// request timeout's reach.
		w, err := dyn.Resource(cowboysGVR).Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "wildwest.dev/v1alpha1", "kind": "Cowboy", "metadata": map[string]any{"name": "two"},
		}}
		if _, err := dynamicClient(t, s, consumer).Resource(cowboysGVR).Namespace("default").Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-w.ResultChan():
			u, ok := e.Object.(*unstructured.Unstructured)
			if e.Type != watch.Added || !ok || u.GetName() != "two" || logicalcluster.From(u) != consumer {
				t.Errorf("watch event: %s %v", e.Type, e.Object)
			}
		case <-time.After(30 * time.Second):
			t.Error("no watch event within 30s")
		}
	})

	t.Run("a user without rights gets 403", func(t *testing.T) {
		dyn, err := dynamic.NewForConfig(vw.tokenConfig(exportPath, "nobody-token"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("nobody lists the export's content: got %v, want 403", err)
		}
		// reader may read, not write.
		dyn, err = dynamic.NewForConfig(vw.tokenConfig("/services/apiexport/"+string(provider)+"/wildwest.dev/clusters/"+string(consumer), "reader-token"))
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "wildwest.dev/v1alpha1", "kind": "Cowboy", "metadata": map[string]any{"name": "x"}}}
		if _, err := dyn.Resource(cowboysGVR).Namespace("default").Create(t.Context(), obj, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("reader creates through the virtual workspace: got %v, want 403", err)
		}
	})

	t.Run("unknown token and no credentials get 401", func(t *testing.T) {
		dyn, err := dynamic.NewForConfig(vw.tokenConfig(exportPath, "wrong-token"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("an unknown token: got %v, want 401", err)
		}
		if code, body := get(t.Context(), vw.httpClient(t, nil), vw.URL+exportPath+"/apis/wildwest.dev/v1alpha1/cowboys", nil); code != http.StatusUnauthorized {
			t.Errorf("anonymous list: %d %s, want 401", code, body)
		}
	})

	t.Run("front-proxy request headers", func(t *testing.T) {
		proxyCert := proxyCA.clientCert(t, "front-proxy")
		client := vw.httpClient(t, &proxyCert)
		url := vw.URL + exportPath + "/apis/wildwest.dev/v1alpha1/cowboys"
		if code, body := get(t.Context(), client, url, http.Header{"X-Remote-User": {"reader"}}); code != http.StatusOK || !strings.Contains(body, `"name":"one"`) {
			t.Errorf("as reader through a front-proxy: %d %s", code, body)
		}
		if code, body := get(t.Context(), client, url, http.Header{"X-Remote-User": {"nobody"}}); code != http.StatusForbidden {
			t.Errorf("as nobody through a front-proxy: %d %s, want 403", code, body)
		}
		// A certificate of another name is not a front-proxy.
		other := proxyCA.clientCert(t, "someone")
		if code, body := get(t.Context(), vw.httpClient(t, &other), url, http.Header{"X-Remote-User": {"reader"}}); code != http.StatusUnauthorized {
			t.Errorf("headers from a certificate not allowed to set them: %d %s, want 401", code, body)
		}
	})

	t.Run("initializing workspaces", func(t *testing.T) {
		cfg := s.Config("")
		cfg.Host = vw.URL + "/services/initializingworkspaces/system:apibindings/clusters/*"
		cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, vw.CAFile
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(logicalClusterGVR).List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Errorf("the shard admin lists the logical clusters a system initializer waits for: %v", err)
		}
		ndyn, err := dynamic.NewForConfig(vw.tokenConfig("/services/initializingworkspaces/system:apibindings/clusters/*", "reader-token"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ndyn.Resource(logicalClusterGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("reader acts as a system initializer: got %v, want 403", err)
		}
	})

	t.Run("other paths", func(t *testing.T) {
		client := vw.httpClient(t, nil)
		for _, p := range []string{"/readyz", "/livez", "/healthz"} {
			if code, body := get(t.Context(), client, vw.URL+p, nil); code != http.StatusOK || body != "ok" {
				t.Errorf("anonymous GET %s: %d %q", p, code, body)
			}
		}
		tokenClient := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
		if code, body := get(t.Context(), client, vw.URL+"/clusters/"+string(consumer)+"/api/v1/namespaces", tokenClient("reader-token")); code != http.StatusForbidden {
			t.Errorf("a shard path on the virtual workspaces: %d %s, want 403", code, body)
		}
	})
}

// vwTokens are the users of the standalone virtual workspace tests: reader
// may enter the provider's workspace and read the export's content
// (exportCowboysForVW grants it), nobody may do neither.
var vwTokens = []string{"reader-token,reader,reader-uid,", "nobody-token,nobody,nobody-uid,"}

// exportCowboysForVW makes vw-provider export the cowboys, vw-consumer
// bind them and hold Cowboy one, and grants reader the export's content.
func exportCowboysForVW(t *testing.T, s *framework.Shard) (provider, consumer logicalcluster.Name) {
	t.Helper()
	provider, consumer = "vw-provider", "vw-consumer"
	createCluster(t, s, provider)
	createCluster(t, s, consumer)
	publishCowboys(t, s, provider)
	createBinding(t, s, consumer, "cowboys", string(provider), "wildwest.dev")
	waitBound(t, s, consumer, "cowboys")
	s.MustKubectl(t, consumer, "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))

	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "read-wildwest"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports/content"}, ResourceNames: []string{"wildwest.dev"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := kube(t, s, provider).RbacV1().ClusterRoles().Create(t.Context(), reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, s, provider, "", "reader-access", "system:kcp:workspace:access", authzUser("reader"))
	bindClusterRole(t, s, provider, "", "reader-reads", "read-wildwest", authzUser("reader"))
	return provider, consumer
}

// TestStandaloneInitializingWorkspaces plays a third-party initializer
// through the standalone virtual workspaces: with a token the shard
// reviews and the right to "initialize" its WorkspaceType in root (asked
// of the shard by SubjectAccessReview), it lists the workspaces waiting
// for it, sets up one's content and removes its initializer; a user
// without that right gets 403.
func TestStandaloneInitializingWorkspaces(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, append([]string{"ini-token,initializer,ini-uid,"}, vwTokens...)...))
	root := kcpClient(t, s, "root")
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "mytype"}, Spec: tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true}}
	if _, err := root.WorkspaceTypes().Create(t.Context(), wt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	initializer := tenancyv1alpha1.InitializerFor("root", "mytype")
	createRole(t, s, "root", "initialize-mytype", rbacv1.PolicyRule{Verbs: []string{"initialize"}, APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{"mytype"}})
	bindClusterRole(t, s, "root", "", "initializer", "initialize-mytype", authzUser("initializer"))
	bindClusterRole(t, s, "root", "", "initializer-access", bootstrap.WorkspaceAccessClusterRole, authzUser("initializer"))
	if _, err := root.Workspaces().Create(t.Context(), &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "mytype", Path: "root"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ws *tenancyv1alpha1.Workspace
	eventually(t, workspaceTimeout, "workspace w to wait for the initializer alone", func(ctx context.Context) (bool, error) {
		var err error
		ws, err = root.Workspaces().Get(ctx, "w", metav1.GetOptions{})
		return err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing &&
			slices.Equal(ws.Status.Initializers, []corev1alpha1.LogicalClusterInitializer{initializer}), err
	})
	cluster := logicalcluster.Name(ws.Spec.Cluster)

	vw := startVirtualWorkspaces(t, s)
	prefix := "/services/initializingworkspaces/" + string(initializer)
	dyn, err := dynamic.NewForConfig(vw.tokenConfig(prefix+"/clusters/*", "ini-token"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := dyn.Resource(logicalClusterGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("the initializer lists its logical clusters: %v", err)
	}
	if got := names(l.Items); len(got) != 1 || l.Items[0].GetAnnotations()[logicalcluster.PathAnnotationKey] != "root:w" {
		t.Errorf("initializing logical clusters of %s: %v", initializer, got)
	}
	other, err := dynamic.NewForConfig(vw.tokenConfig(prefix+"/clusters/*", "reader-token"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Resource(logicalClusterGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a user who may not initialize mytype: got %v, want 403", err)
	}

	inside := vw.tokenConfig(prefix+"/clusters/"+string(cluster), "ini-token")
	k, err := kubernetes.NewForConfig(inside)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "provided"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a namespace in the initializing workspace: %v", err)
	}
	insideDyn, err := dynamic.NewForConfig(inside)
	if err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"initializers": []string{}}})
	if _, err := insideDyn.Resource(logicalClusterGVR).Patch(t.Context(), corev1alpha1.LogicalClusterName, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("removing the initializer through the virtual workspace: %v", err)
	}
	waitWorkspaceReady(t, s, "root", "w")
	if _, err := kube(t, s, "root:w").CoreV1().Namespaces().Get(t.Context(), "provided", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace set up by the initializer: %v", err)
	}
	eventually(t, 30*time.Second, "the initialized workspace to leave the virtual workspace", func(ctx context.Context) (bool, error) {
		l, err := dyn.Resource(logicalClusterGVR).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	})
}

// TestStandaloneVirtualWorkspacesAdvertised: a shard started with
// --shard-virtual-workspace-url of the standalone virtual workspaces
// publishes their URL in APIExportEndpointSlices, and a provider's user
// lists its consumers' objects at that URL, with a token reviewed as kcp
// deployments configure it: --authentication-kubeconfig is the shard's
// admin.kubeconfig (root context, kcp-admin). The shard runs without
// in-process virtual workspaces (--run-virtual-workspaces=false): its own
// /services/apiexport answers 404.
func TestStandaloneVirtualWorkspacesAdvertised(t *testing.T) {
	port, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	vwURL := "https://127.0.0.1:" + strconv.Itoa(port)
	s := framework.StartShard(t, withTokens(t, vwTokens...), func(o *options.Options) {
		o.ShardVirtualWorkspaceURL = vwURL
		o.RunVirtualWorkspaces = false
	})
	provider, consumer := exportCowboysForVW(t, s)
	vw := startVirtualWorkspaces(t, s, func(o *vwoptions.Options) {
		o.SecurePort = port
		o.AuthenticationKubeconfig = s.Kubeconfig
	})
	if vw.URL != vwURL {
		t.Fatalf("virtual workspaces at %s, want %s", vw.URL, vwURL)
	}

	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboys"},
		Spec:       apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Path: string(provider), Name: "wildwest.dev"}},
	}
	if _, err := kcpClient(t, s, provider).APIExportEndpointSlices().Create(t.Context(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var endpoint string
	eventually(t, 30*time.Second, "the endpoint slice's endpoints", func(ctx context.Context) (bool, error) {
		sl, err := kcpClient(t, s, provider).APIExportEndpointSlices().Get(ctx, "cowboys", metav1.GetOptions{})
		if err != nil || len(sl.Status.APIExportEndpoints) != 1 {
			return false, err
		}
		endpoint = sl.Status.APIExportEndpoints[0].URL
		return true, nil
	})
	if want := vwURL + "/services/apiexport/" + string(provider) + "/wildwest.dev"; endpoint != want {
		t.Fatalf("endpoint %q, want %q", endpoint, want)
	}
	cfg := vw.tokenConfig("", "reader-token")
	cfg.Host = endpoint + "/clusters/*"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || logicalcluster.From(&list.Items[0]) != consumer {
		t.Errorf("reader lists at the advertised endpoint: %v %v", err, list)
	}

	cfg = s.Config("")
	cfg.Host = s.URL + "/services/apiexport/" + string(provider) + "/wildwest.dev/clusters/*"
	dyn, err = dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the shard serves the apiexport virtual workspace in-process with --run-virtual-workspaces=false: %v", err)
	}

	// A SyncTarget's syncer virtual workspace is advertised at, and served
	// by, the standalone process too: a user who may not sync the
	// SyncTarget is refused there, and the shard does not serve it.
	eventually(t, 30*time.Second, "root's APIExport workload.kcp.io", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, logicalcluster.Root).APIExports().Get(ctx, "workload.kcp.io", metav1.GetOptions{})
		return err == nil && e.Status.IdentityHash != "", nil
	})
	createBinding(t, s, provider, "workload.kcp.io", "root", "workload.kcp.io")
	waitBound(t, s, provider, "workload.kcp.io")
	applyEventually(t, s, provider, "apiVersion: workload.kcp.io/v1alpha1\nkind: SyncTarget\nmetadata:\n  name: kind\n")
	var syncerURL string
	eventually(t, 30*time.Second, "the SyncTarget's syncer URL", func(ctx context.Context) (bool, error) {
		st, err := dynamicClient(t, s, provider).Resource(syncTargetsGVR).Get(ctx, "kind", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		vws, _, _ := unstructured.NestedSlice(st.Object, "status", "virtualWorkspaces")
		if len(vws) != 1 {
			return false, nil
		}
		syncerURL, _, _ = unstructured.NestedString(vws[0].(map[string]any), "syncerURL")
		return syncerURL == vwURL+"/services/syncer/"+string(provider)+"/kind/"+string(st.GetUID()), nil
	})
	cfg = vw.tokenConfig("", "reader-token")
	cfg.Host = syncerURL + "/clusters/*"
	if dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(configMapsGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a user who may not sync, at the standalone syncer virtual workspace: %v", err)
	}
	cfg = s.Config("")
	cfg.Host = strings.Replace(syncerURL, vwURL, s.URL, 1) + "/clusters/*"
	if dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(configMapsGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the shard serves the syncer virtual workspace in-process with --run-virtual-workspaces=false: %v", err)
	}
}
