package workspace

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// fakeKCP serves the few endpoints the plugin uses: get, list and create of
// Workspaces per logical cluster, the home workspace "~" in root, and
// discovery, over TLS with real JSON of our types.
type fakeKCP struct {
	srv *httptest.Server

	mu sync.Mutex
	// workspaces by parent path and name.
	workspaces map[string]map[string]*tenancyv1alpha1.Workspace
	// readyAfter is how many GETs a created workspace answers before it
	// turns Ready.
	readyAfter int
	gets       map[string]int
	// forbidden logical clusters answer 403 to workspace requests.
	forbidden map[string]bool
	// denied logical clusters answer 403 to discovery.
	denied map[string]bool
	// createError, when set, may fail a create with a Status.
	createError func(parent string, ws *tenancyv1alpha1.Workspace) *apierrors.StatusError
	created     []*tenancyv1alpha1.Workspace

	// home is the path of the caller's home workspace.
	home logicalcluster.Path
	// homeThrottled and homeUnavailable are how many home GETs answer 429
	// (with Retry-After: 0) and 503 (without Retry-After) first.
	homeThrottled, homeUnavailable int
	// homeNotReady is how many home GETs answer an Initializing workspace.
	homeNotReady int
}

func newFakeKCP(t *testing.T) *fakeKCP {
	t.Helper()
	f := &fakeKCP{
		workspaces: map[string]map[string]*tenancyv1alpha1.Workspace{},
		gets:       map[string]int{},
		forbidden:  map[string]bool{},
		denied:     map[string]bool{},
		home:       logicalcluster.NewPath("root:users:ab:alice"),
	}
	mux := http.NewServeMux()
	const wsPath = "/clusters/{cluster}/apis/tenancy.kcp.io/v1alpha1/workspaces"
	mux.HandleFunc("GET "+wsPath, f.list)
	mux.HandleFunc("POST "+wsPath, f.create)
	mux.HandleFunc("GET "+wsPath+"/{name}", f.get)
	mux.HandleFunc("GET /clusters/{cluster}/api", f.discovery)
	mux.HandleFunc("GET /clusters/{cluster}/apis", f.discovery)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, apierrors.NewNotFound(tenancyv1alpha1.Resource("unknown"), r.URL.Path))
	})
	f.srv = httptest.NewTLSServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// add stores a workspace at path p (its parent must be root or added).
func (f *fakeKCP) add(p string, phase corev1alpha1.LogicalClusterPhaseType) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := logicalcluster.NewPath(p)
	parent, _ := path.Parent()
	f.put(parent.String(), &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: path.Base()},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: "root"},
			URL:  f.srv.URL + "/clusters/" + p,
		},
		Status: tenancyv1alpha1.WorkspaceStatus{Phase: phase},
	})
}

func (f *fakeKCP) put(parent string, ws *tenancyv1alpha1.Workspace) {
	if f.workspaces[parent] == nil {
		f.workspaces[parent] = map[string]*tenancyv1alpha1.Workspace{}
	}
	f.workspaces[parent][ws.Name] = ws
}

// exists tells whether the logical cluster at p exists. Callers hold mu.
func (f *fakeKCP) exists(p string) bool {
	if p == "root" {
		return true
	}
	path := logicalcluster.NewPath(p)
	parent, ok := path.Parent()
	if !ok || !f.exists(parent.String()) {
		return false
	}
	_, ok = f.workspaces[parent.String()][path.Base()]
	return ok
}

// cluster checks the logical cluster of a workspace request and answers
// the error for it, if any. Callers hold mu.
func (f *fakeKCP) cluster(w http.ResponseWriter, r *http.Request) (string, bool) {
	p := r.PathValue("cluster")
	if f.forbidden[p] {
		writeStatus(w, apierrors.NewForbidden(tenancyv1alpha1.Resource("workspaces"), "", fmt.Errorf("access to %q denied", p)))
		return "", false
	}
	if !f.exists(p) {
		writeStatus(w, apierrors.NewNotFound(tenancyv1alpha1.Resource("logicalclusters"), p))
		return "", false
	}
	return p, true
}

func (f *fakeKCP) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := r.PathValue("name")
	if name == "~" && r.PathValue("cluster") == "root" {
		f.getHome(w)
		return
	}
	p, ok := f.cluster(w, r)
	if !ok {
		return
	}
	ws, ok := f.workspaces[p][name]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), name))
		return
	}
	key := p + "|" + name
	f.gets[key]++
	if ws.Status.Phase != corev1alpha1.LogicalClusterPhaseReady && f.readyAfter > 0 && f.gets[key] >= f.readyAfter {
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	}
	writeObject(w, http.StatusOK, workspaceJSON(ws))
}

func (f *fakeKCP) getHome(w http.ResponseWriter) {
	switch {
	case f.homeThrottled > 0:
		f.homeThrottled--
		w.Header().Set("Retry-After", "0")
		writeStatus(w, apierrors.NewTooManyRequests("slow down", 0))
		return
	case f.homeUnavailable > 0:
		f.homeUnavailable--
		writeStatus(w, apierrors.NewServiceUnavailable("home workspace is being created"))
		return
	}
	phase := corev1alpha1.LogicalClusterPhaseReady
	if f.homeNotReady > 0 {
		f.homeNotReady--
		phase = corev1alpha1.LogicalClusterPhaseInitializing
	}
	writeObject(w, http.StatusOK, workspaceJSON(&tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: f.home.Base()},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "home", Path: "root"},
			URL:  f.srv.URL + "/clusters/" + f.home.String(),
		},
		Status: tenancyv1alpha1.WorkspaceStatus{Phase: phase},
	}))
}

func (f *fakeKCP) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.cluster(w, r)
	if !ok {
		return
	}
	list := &tenancyv1alpha1.WorkspaceList{
		TypeMeta: metav1.TypeMeta{APIVersion: tenancyv1alpha1.SchemeGroupVersion.String(), Kind: "WorkspaceList"},
		Items:    []tenancyv1alpha1.Workspace{},
	}
	for _, ws := range f.workspaces[p] {
		list.Items = append(list.Items, *ws)
	}
	writeObject(w, http.StatusOK, list)
}

func (f *fakeKCP) create(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.cluster(w, r)
	if !ok {
		return
	}
	ws := &tenancyv1alpha1.Workspace{}
	if err := json.NewDecoder(r.Body).Decode(ws); err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	f.created = append(f.created, ws.DeepCopy())
	if f.createError != nil {
		if err := f.createError(p, ws); err != nil {
			writeStatus(w, err)
			return
		}
	}
	if _, ok := f.workspaces[p][ws.Name]; ok {
		writeStatus(w, apierrors.NewAlreadyExists(tenancyv1alpha1.Resource("workspaces"), ws.Name))
		return
	}
	// Default the type as the server does: organization in root,
	// universal elsewhere, and the path of a type to root.
	switch {
	case ws.Spec.Type == nil && p == "root":
		ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: "organization", Path: "root"}
	case ws.Spec.Type == nil:
		ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: "root"}
	case ws.Spec.Type.Path == "":
		ws.Spec.Type.Path = "root"
	}
	ws.Spec.URL = f.srv.URL + "/clusters/" + p + ":" + ws.Name
	ws.Status.Phase = corev1alpha1.LogicalClusterPhaseScheduling
	f.put(p, ws)
	writeObject(w, http.StatusCreated, workspaceJSON(ws))
}

func (f *fakeKCP) discovery(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.PathValue("cluster")
	switch {
	case f.denied[p]:
		writeStatus(w, apierrors.NewForbidden(tenancyv1alpha1.Resource("workspaces"), "", fmt.Errorf("access to %q denied", p)))
	case !f.exists(p):
		writeStatus(w, apierrors.NewNotFound(tenancyv1alpha1.Resource("logicalclusters"), p))
	case strings.HasSuffix(r.URL.Path, "/api"):
		writeObject(w, http.StatusOK, &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "APIVersions"},
			Versions: []string{"v1"},
		})
	default:
		gv := metav1.GroupVersionForDiscovery{GroupVersion: tenancyv1alpha1.SchemeGroupVersion.String(), Version: "v1alpha1"}
		writeObject(w, http.StatusOK, &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "APIGroupList"},
			Groups:   []metav1.APIGroup{{Name: tenancyv1alpha1.GroupName, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}},
		})
	}
}

func workspaceJSON(ws *tenancyv1alpha1.Workspace) *tenancyv1alpha1.Workspace {
	out := ws.DeepCopy()
	out.APIVersion = tenancyv1alpha1.SchemeGroupVersion.String()
	out.Kind = "Workspace"
	return out
}

func writeObject(w http.ResponseWriter, code int, obj any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(obj)
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.APIVersion, st.Kind = "v1", "Status"
	writeObject(w, int(st.Code), &st)
}

// writeKubeconfig writes a kubeconfig whose context "admin" points at the
// fake server with URL suffix (e.g. "/clusters/root" or "") and returns its
// path.
func (f *fakeKCP) writeKubeconfig(t *testing.T, suffix string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"kcp": {Server: f.srv.URL + suffix, CertificateAuthorityData: ca}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {Token: "admin-token"}},
		Contexts:       map[string]*clientcmdapi.Context{"admin": {Cluster: "kcp", AuthInfo: "admin"}},
		CurrentContext: "admin",
	}
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// run executes kubectl ws with args against the kubeconfig at path (none
// given when empty), as the binary would, and returns what it printed and
// its exit code.
func run(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if kubeconfig != "" {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	cmd.SetArgs(args)
	code = Run(t.Context(), cmd)
	return out.String(), errOut.String(), code
}

// currentServer returns the current context's server URL in a kubeconfig.
func currentServer(t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		t.Fatalf("current context %q not found", cfg.CurrentContext)
	}
	return cfg.Clusters[ctx.Cluster].Server
}
