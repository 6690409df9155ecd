package bind

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
)

// fakeKCP serves what bind apiexport uses: create and get of APIBindings
// and get of APIExports, per logical cluster, over TLS with real JSON of our
// types. Bindings are bound as the test says.
type fakeKCP struct {
	srv *httptest.Server

	mu sync.Mutex
	// bindings and exports by logical cluster and name.
	bindings map[string]map[string]*apisv1alpha1.APIBinding
	exports  map[string]map[string]*apisv1alpha1.APIExport
	// created are the bodies of the creates, by logical cluster.
	created map[string][]*apisv1alpha1.APIBinding
	// gets counts the GETs of bindings.
	gets int
	// bind sets the status of a binding on create (gets 0) and on each GET
	// (gets 1, 2, ...).
	bind func(b *apisv1alpha1.APIBinding, gets int)
	// getError, when set, may fail the GET of a binding.
	getError func(gets int) *apierrors.StatusError
}

func newFakeKCP(t *testing.T) *fakeKCP {
	t.Helper()
	f := &fakeKCP{
		bindings: map[string]map[string]*apisv1alpha1.APIBinding{},
		exports:  map[string]map[string]*apisv1alpha1.APIExport{},
		created:  map[string][]*apisv1alpha1.APIBinding{},
		bind:     func(*apisv1alpha1.APIBinding, int) {},
	}
	mux := http.NewServeMux()
	const prefix = "/clusters/{cluster}/apis/apis.kcp.io/v1alpha1/"
	mux.HandleFunc("POST "+prefix+"apibindings", f.createBinding)
	mux.HandleFunc("GET "+prefix+"apibindings/{name}", f.getBinding)
	mux.HandleFunc("GET "+prefix+"apiexports/{name}", f.getExport)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, apierrors.NewNotFound(apisv1alpha1.Resource("unknown"), r.Method+" "+r.URL.Path))
	})
	f.srv = httptest.NewTLSServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeKCP) createBinding(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cluster := r.PathValue("cluster")
	b := &apisv1alpha1.APIBinding{}
	if err := json.NewDecoder(r.Body).Decode(b); err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	f.created[cluster] = append(f.created[cluster], b.DeepCopy())
	if _, ok := f.bindings[cluster][b.Name]; ok {
		writeStatus(w, apierrors.NewAlreadyExists(apisv1alpha1.Resource("apibindings"), b.Name))
		return
	}
	if f.bindings[cluster] == nil {
		f.bindings[cluster] = map[string]*apisv1alpha1.APIBinding{}
	}
	f.bind(b, 0)
	f.bindings[cluster][b.Name] = b
	writeObject(w, http.StatusCreated, bindingJSON(b))
}

func (f *fakeKCP) getBinding(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.getError != nil {
		if err := f.getError(f.gets); err != nil {
			writeStatus(w, err)
			return
		}
	}
	name := r.PathValue("name")
	b, ok := f.bindings[r.PathValue("cluster")][name]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(apisv1alpha1.Resource("apibindings"), name))
		return
	}
	f.bind(b, f.gets)
	writeObject(w, http.StatusOK, bindingJSON(b))
}

func (f *fakeKCP) getExport(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := r.PathValue("name")
	e, ok := f.exports[r.PathValue("cluster")][name]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(apisv1alpha1.Resource("apiexports"), name))
		return
	}
	out := e.DeepCopy()
	out.APIVersion, out.Kind = apisv1alpha1.SchemeGroupVersion.String(), "APIExport"
	writeObject(w, http.StatusOK, out)
}

// addExport stores an APIExport in a logical cluster.
func (f *fakeKCP) addExport(cluster string, e *apisv1alpha1.APIExport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.exports[cluster] == nil {
		f.exports[cluster] = map[string]*apisv1alpha1.APIExport{}
	}
	f.exports[cluster][e.Name] = e
}

// createdIn returns the bodies of the creates in a logical cluster.
func (f *fakeKCP) createdIn(cluster string) []*apisv1alpha1.APIBinding {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.created[cluster]
}

// requests returns how many creates and binding GETs the server answered.
func (f *fakeKCP) requests() (creates, gets int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.created {
		creates += len(c)
	}
	return creates, f.gets
}

func bindingJSON(b *apisv1alpha1.APIBinding) *apisv1alpha1.APIBinding {
	out := b.DeepCopy()
	out.APIVersion, out.Kind = apisv1alpha1.SchemeGroupVersion.String(), "APIBinding"
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

// writeKubeconfig writes a kubeconfig whose current context points at the
// fake server with URL suffix (e.g. "/clusters/root:consumer") and returns
// its path.
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

// testInterval is how often the command polls in tests.
const testInterval = 10 * time.Millisecond

// run executes kubectl kcp bind with args against the kubeconfig at path,
// as the binary would, and returns what it printed and its exit code.
func run(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newCommand(testInterval)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(slices.Concat(args, []string{"--kubeconfig", kubeconfig}))
	code = workspace.Run(t.Context(), cmd)
	return out.String(), errOut.String(), code
}
