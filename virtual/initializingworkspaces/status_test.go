package initializingworkspaces

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func lc(phase corev1alpha1.LogicalClusterPhaseType, initializers ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
	return &corev1alpha1.LogicalCluster{Status: corev1alpha1.LogicalClusterStatus{Phase: phase, Initializers: initializers}}
}

func with(l *corev1alpha1.LogicalCluster, f func(*corev1alpha1.LogicalCluster)) *corev1alpha1.LogicalCluster {
	f(l)
	return l
}

func TestCheckStatusChange(t *testing.T) {
	const me, other, third = "root:me", "root:other", "root:third"
	const init = corev1alpha1.LogicalClusterPhaseInitializing
	for _, tc := range []struct {
		name     string
		cur, upd *corev1alpha1.LogicalCluster
		refusal  string
	}{
		{name: "remove itself", cur: lc(init, me, other), upd: lc(init, other)},
		{name: "remove itself, the last", cur: lc(init, me), upd: lc(init)},
		{name: "remove nothing", cur: lc(init, me, other), upd: lc(init, me, other)},
		{name: "reorder", cur: lc(init, me, other), upd: lc(init, other, me), refusal: "cannot reorder or repeat them"},
		{name: "repeat another", cur: lc(init, me, other), upd: lc(init, other, other), refusal: "cannot reorder or repeat them"},
		{name: "remove itself, reorder the rest", cur: lc(init, other, me, third), upd: lc(init, third, other), refusal: "cannot reorder or repeat them"},
		{name: "remove itself from the middle", cur: lc(init, other, me, third), upd: lc(init, other, third)},
		{name: "remove another", cur: lc(init, me, other), upd: lc(init, me), refusal: `cannot remove ["root:other"]`},
		{name: "remove all", cur: lc(init, me, other), upd: lc(init), refusal: `cannot remove ["root:other"]`},
		{name: "add one", cur: lc(init, me), upd: lc(init, me, third), refusal: `cannot add ["root:third"]`},
		{name: "swap itself for another", cur: lc(init, me, other), upd: lc(init, other, third), refusal: `cannot add ["root:third"]`},
		{name: "set Ready", cur: lc(init, me, other), upd: lc(corev1alpha1.LogicalClusterPhaseReady, other), refusal: "cannot change status.phase"},
		{name: "the last one makes it Ready", cur: lc(init, me), upd: lc(corev1alpha1.LogicalClusterPhaseReady)},
		{name: "Ready from another phase", cur: lc(corev1alpha1.LogicalClusterPhaseUnavailable, me), upd: lc(corev1alpha1.LogicalClusterPhaseReady), refusal: "cannot change status.phase"},
		{name: "clear the phase", cur: lc(init, me), upd: lc("", me), refusal: "cannot change status.phase"},
		{name: "set the URL", cur: lc(init, me), upd: with(lc(init), func(l *corev1alpha1.LogicalCluster) { l.Status.URL = "https://evil" }), refusal: "cannot change status.URL"},
		{name: "clear the URL", cur: with(lc(init, me), func(l *corev1alpha1.LogicalCluster) { l.Status.URL = "https://shard" }), upd: lc(init), refusal: "cannot change status.URL"},
		{name: "add a condition", cur: lc(init, me), upd: with(lc(init, me), func(l *corev1alpha1.LogicalCluster) {
			l.Status.Conditions = conditionsv1alpha1.Conditions{{Type: "Ready", Status: corev1.ConditionTrue}}
		}), refusal: "cannot change status.conditions"},
		{name: "URL and a label", cur: lc(init, me), upd: with(lc(init), func(l *corev1alpha1.LogicalCluster) {
			l.Status.URL, l.Labels = "https://evil", map[string]string{"a": "b"}
		}), refusal: "cannot change status.URL, metadata.labels"},
		{name: "an annotation", cur: lc(init, me), upd: with(lc(init), func(l *corev1alpha1.LogicalCluster) { l.Annotations = map[string]string{"kcp.io/owner": "x"} }), refusal: "cannot change metadata.annotations"},
		{name: "a finalizer", cur: lc(init, me), upd: with(lc(init), func(l *corev1alpha1.LogicalCluster) { l.Finalizers = []string{"x"} }), refusal: "cannot change metadata.finalizers"},
		{name: "the deletion timestamp", cur: lc(init, me), upd: with(lc(init), func(l *corev1alpha1.LogicalCluster) { l.DeletionTimestamp = &metav1.Time{} }), refusal: "cannot change metadata"},
		{name: "the spec", cur: lc(init, me), upd: with(lc(init), func(l *corev1alpha1.LogicalCluster) {
			l.Spec.Initializers = []corev1alpha1.LogicalClusterInitializer{third}
		}), refusal: "cannot change spec"},
		{name: "the shard keeps its own fields", cur: with(lc(init, me), func(l *corev1alpha1.LogicalCluster) {
			l.ResourceVersion, l.Labels = "7", map[string]string{corev1alpha1.InitializerLabelKey(me): corev1alpha1.InitializerLabelValue(me), "a": "b"}
			l.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "shard"}}
		}), upd: with(lc(corev1alpha1.LogicalClusterPhaseReady), func(l *corev1alpha1.LogicalCluster) {
			l.TypeMeta = metav1.TypeMeta{Kind: "LogicalCluster", APIVersion: "core.kcp.io/v1alpha1"}
			l.ResourceVersion, l.Labels = "8", map[string]string{"a": "b"}
			l.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "shard"}, {Manager: "me"}}
		})},
		{name: "nil and empty are the same", cur: with(lc(init, me), func(l *corev1alpha1.LogicalCluster) { l.Annotations = map[string]string{} }), upd: lc(init)},
		{name: "another initializer's label", cur: with(lc(init, me, other), func(l *corev1alpha1.LogicalCluster) {
			l.Labels = map[string]string{corev1alpha1.InitializerLabelKey(other): corev1alpha1.InitializerLabelValue(other)}
		}), upd: lc(init, other), refusal: "cannot change metadata.labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkStatusChange(me, tc.cur, tc.upd)
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refusal != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.refusal)):
				t.Fatalf("got %v, want Forbidden with %q", err, tc.refusal)
			}
		})
	}
}

func TestWithResourceVersion(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		fails    bool
	}{
		{in: `{"status":{}}`, want: `{"metadata":{"resourceVersion":"7"},"status":{}}`},
		{in: `{"metadata":{"name":"cluster","generation":9007199254740993}}`, want: `{"metadata":{"generation":9007199254740993,"name":"cluster","resourceVersion":"7"}}`},
		{in: `{"metadata":{"resourceVersion":""}}`, want: `{"metadata":{"resourceVersion":"7"}}`},
		{in: `{"metadata":{"resourceVersion":"3"}}`, want: `{"metadata":{"resourceVersion":"3"}}`},
		{in: `{"metadata":[]}`, fails: true},
		{in: `null`, fails: true},
		{in: `[]`, fails: true},
	} {
		got, err := withResourceVersion([]byte(tc.in), "7")
		switch {
		case tc.fails:
			if err == nil {
				t.Errorf("%s: no error", tc.in)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case string(got) != tc.want:
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestInitializerSelector(t *testing.T) {
	own := corev1alpha1.InitializerLabelKey("root:t") + "=" + corev1alpha1.InitializerLabelValue("root:t")
	for client, want := range map[string]string{
		"":              own,
		" ":             own,
		"a=b":           "a=b," + own,
		"env in (x,y)":  "env in (x,y)," + own,
		"!gone,x!=y":    "!gone,x!=y," + own,
		"a=b=c,(":       "",
		"in (a)":        "",
		"x notin (a b)": "",
	} {
		got, err := initializerSelector(client, "root:t")
		if want == "" {
			if !apierrors.IsBadRequest(err) {
				t.Errorf("%q: got %q, %v; want BadRequest", client, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", client, got, err, want)
		}
	}
}

// newTestHandler builds the handler against a shard that does not exist:
// enough for what it answers itself.
func newTestHandler(t *testing.T, authz authorizer.Authorizer) http.Handler {
	t.Helper()
	h, err := New(Config{Loopback: &rest.Config{Host: "https://127.0.0.1:1"}, Authorizer: authz})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h http.Handler, u user.Info, method, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	if u != nil {
		req = req.WithContext(request.WithUser(req.Context(), u))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestAuthorization(t *testing.T) {
	var asked []string
	authz := authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		c, _ := logicalcluster.ClusterFrom(ctx)
		asked = append(asked, strings.Join([]string{a.GetUser().GetName(), string(c.Name), a.GetVerb(), a.GetAPIGroup(), a.GetResource(), a.GetName()}, " "))
		if a.GetUser().GetName() == "alice" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, "not alice", nil
	})
	h := newTestHandler(t, authz)
	alice := &user.DefaultInfo{Name: "alice"}
	bob := &user.DefaultInfo{Name: "bob"}
	master := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}
	const apis = "/clusters/*/apis"
	for _, tc := range []struct {
		user user.Info
		in   string
		code int
	}{
		{alice, "root:org:mytype", http.StatusOK},
		{bob, "root:org:mytype", http.StatusForbidden},
		{nil, "root:org:mytype", http.StatusUnauthorized},
		{alice, "system:owner", http.StatusForbidden},
		{master, "system:owner", http.StatusOK},
	} {
		rec := serve(h, tc.user, http.MethodGet, PathPrefix+tc.in+apis)
		if rec.Code != tc.code {
			t.Errorf("%v on %s: %d, want %d: %s", tc.user, tc.in, rec.Code, tc.code, rec.Body)
		}
		if tc.code != http.StatusOK {
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != tc.code {
				t.Errorf("%v on %s: not a Status: %s", tc.user, tc.in, rec.Body)
			}
		}
	}
	want := []string{"alice root:org initialize tenancy.kcp.io workspacetypes mytype", "bob root:org initialize tenancy.kcp.io workspacetypes mytype"}
	if strings.Join(asked, "\n") != strings.Join(want, "\n") {
		t.Errorf("asked:\n%s\nwant:\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
	rec := serve(h, bob, http.MethodGet, PathPrefix+"root:org:mytype"+apis)
	if !strings.Contains(rec.Body.String(), `user \"bob\" cannot initialize workspaces of type \"mytype\" in logical cluster \"root:org\": not alice`) {
		t.Errorf("unclear refusal: %s", rec.Body)
	}
}

func TestDiscovery(t *testing.T) {
	h := newTestHandler(t, authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	}))
	alice := &user.DefaultInfo{Name: "alice"}
	base := PathPrefix + "root:mytype/clusters/*"
	for path, want := range map[string]string{
		"/api":                       `{"kind":"APIVersions","apiVersion":"v1","versions":[],"serverAddressByClientCIDRs":null}`,
		"/apis":                      `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"core.kcp.io","versions":[{"groupVersion":"core.kcp.io/v1alpha1","version":"v1alpha1"}],"preferredVersion":{"groupVersion":"core.kcp.io/v1alpha1","version":"v1alpha1"}}]}`,
		"/apis/core.kcp.io":          `{"kind":"APIGroup","apiVersion":"v1","name":"core.kcp.io","versions":[{"groupVersion":"core.kcp.io/v1alpha1","version":"v1alpha1"}],"preferredVersion":{"groupVersion":"core.kcp.io/v1alpha1","version":"v1alpha1"}}`,
		"/apis/core.kcp.io/v1alpha1": `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"core.kcp.io/v1alpha1","resources":[{"name":"logicalclusters","singularName":"logicalcluster","namespaced":false,"kind":"LogicalCluster","verbs":["get","list","watch"],"shortNames":["lc"],"categories":["kcp"]},{"name":"logicalclusters/status","singularName":"","namespaced":false,"kind":"LogicalCluster","verbs":["get","patch","update"]}]}`,
	} {
		rec := serve(h, alice, http.MethodGet, base+path)
		if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != want {
			t.Errorf("%s: %d %s\nwant %s", path, rec.Code, rec.Body, want)
		}
	}
	for path, code := range map[string]int{
		"/apis/tenancy.kcp.io": http.StatusNotFound,
		"/api/v1":              http.StatusNotFound,
		"/openapi/v2":          http.StatusNotFound,
		"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster":  http.StatusBadRequest,
		"/apis/core.kcp.io/v1alpha1/logicalclusters/a/status": http.StatusBadRequest,
	} {
		if rec := serve(h, alice, http.MethodGet, base+path); rec.Code != code {
			t.Errorf("%s: %d, want %d: %s", path, rec.Code, code, rec.Body)
		}
	}
	if rec := serve(h, alice, http.MethodPost, base+"/apis/core.kcp.io/v1alpha1/logicalclusters"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST of logicalclusters: %d: %s", rec.Code, rec.Body)
	}
	if rec := serve(h, alice, http.MethodPut, base+"/apis"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT of /apis: %d: %s", rec.Code, rec.Body)
	}
}

// TestWriteStatusStartsOver checks the conflict handling of status writes
// against a stand-in for the shard that changes the LogicalCluster between
// the read and the write of the first attempt (a real shard cannot be made
// to lose that race on purpose).
func TestWriteStatusStartsOver(t *testing.T) {
	for _, tc := range []struct {
		name      string
		typ       string
		patch     string
		conflicts int
		wantCode  int
		wantPuts  []string // resourceVersions the PUTs carried
	}{
		{name: "one conflict", patch: `{"status":{"initializers":["root:other"]}}`, conflicts: 1, wantCode: http.StatusOK, wantPuts: []string{"1", "2"}},
		{name: "always conflicts", patch: `{"status":{"initializers":["root:other"]}}`, conflicts: 100, wantCode: http.StatusConflict, wantPuts: []string{"1", "2", "3", "4", "5"}},
		{name: "JSON patch", typ: "application/json-patch+json", patch: `[{"op":"remove","path":"/status/initializers/0"}]`, conflicts: 2, wantCode: http.StatusOK, wantPuts: []string{"1", "2", "3"}},
		{name: "JSON patch testing the resourceVersion", typ: "application/json-patch+json", patch: `[{"op":"test","path":"/metadata/resourceVersion","value":"1"},{"op":"remove","path":"/status/initializers/0"}]`, conflicts: 100, wantCode: http.StatusConflict, wantPuts: []string{"1"}},
		{name: "the client's precondition", patch: `{"metadata":{"resourceVersion":"1"},"status":{"initializers":["root:other"]}}`, conflicts: 100, wantCode: http.StatusConflict, wantPuts: []string{"1"}},
		{name: "a stale object", patch: `{"metadata":{"resourceVersion":"0"},"status":{"initializers":["root:me","root:other","root:third"]}}`, wantCode: http.StatusConflict},
		{name: "the URL", patch: `{"status":{"initializers":["root:other"],"URL":"https://evil"}}`, wantCode: http.StatusForbidden},
		{name: "the managed fields", typ: "application/json-patch+json", patch: `[{"op":"add","path":"/metadata/managedFields","value":[{"manager":"x"}]}]`, wantCode: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rv, conflicts := 1, tc.conflicts
			var puts []string
			shard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" && r.Method == http.MethodGet {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"apiVersion":"core.kcp.io/v1alpha1","kind":"LogicalCluster","metadata":{"name":"cluster","resourceVersion":"` +
						strconv.Itoa(rv) + `"},"status":{"phase":"Initializing","initializers":["root:me","root:other"]}}`))
					return
				}
				if r.URL.Path == "/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status" && r.Method == http.MethodPut {
					var lc corev1alpha1.LogicalCluster
					if err := json.NewDecoder(r.Body).Decode(&lc); err != nil {
						t.Errorf("PUT body: %v", err)
					}
					puts = append(puts, lc.ResourceVersion)
					if conflicts > 0 {
						conflicts--
						rv++ // someone else wrote in between
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusConflict)
						_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,"message":"the object has been modified"}`))
						return
					}
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"kind":"LogicalCluster"}`))
					return
				}
				t.Errorf("unexpected request %s %s", r.Method, r.URL)
				w.WriteHeader(http.StatusTeapot)
			}))
			defer shard.Close()
			h, err := New(Config{Loopback: &rest.Config{Host: shard.URL}, Authorizer: authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
				return authorizer.DecisionAllow, "", nil
			})})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPatch, PathPrefix+"root:me/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status", strings.NewReader(tc.patch))
			if tc.typ == "" {
				tc.typ = "application/merge-patch+json"
			}
			req.Header.Set("Content-Type", tc.typ)
			req = req.WithContext(request.WithUser(req.Context(), &user.DefaultInfo{Name: "alice"}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("code %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			if strings.Join(puts, ",") != strings.Join(tc.wantPuts, ",") {
				t.Fatalf("PUTs with resourceVersions %q, want %q", puts, tc.wantPuts)
			}
		})
	}
}
