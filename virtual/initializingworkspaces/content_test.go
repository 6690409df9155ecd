package initializingworkspaces

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
)

func TestCheckContent(t *testing.T) {
	const (
		ok         = 0
		notFound   = http.StatusNotFound
		forbidden  = http.StatusForbidden
		notAllowed = http.StatusMethodNotAllowed
	)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		// Resource requests, any verb.
		{"GET", "api/v1/namespaces", ok},
		{"POST", "api/v1/namespaces", ok},
		{"DELETE", "api/v1/namespaces/seed/configmaps/x", ok},
		{"GET", "api/v1/watch/namespaces/seed/configmaps", ok},
		{"PATCH", "apis/rbac.authorization.k8s.io/v1/clusterrolebindings/x", ok},
		{"POST", "apis/tenancy.kcp.io/v1alpha1/workspaces", ok},
		{"GET", "apis/core.kcp.io/v1alpha1/shards", ok},
		// Discovery, read only.
		{"GET", "api", ok},
		{"GET", "api/v1", ok},
		{"HEAD", "apis", ok},
		{"GET", "apis/apps", ok},
		{"GET", "apis/apps/v1", ok},
		{"GET", "openapi/v2", ok},
		{"GET", "openapi/v3/apis/apps/v1", ok},
		{"GET", "version", ok},
		{"POST", "api", notAllowed},
		{"PUT", "api/v1", notAllowed},
		{"DELETE", "apis/apps/v1", notAllowed},
		{"POST", "openapi/v2", notAllowed},
		{"POST", "version", notAllowed},
		// LogicalClusters have their own endpoints, in any form.
		{"GET", "apis/core.kcp.io/v1alpha1/logicalclusters", forbidden},
		{"DELETE", "apis/core.kcp.io/v1/logicalclusters/cluster", forbidden},
		{"PUT", "apis/core.kcp.io/v1alpha2/logicalclusters/cluster/status", forbidden},
		{"GET", "apis/core.kcp.io/v1alpha1/watch/logicalclusters", forbidden},
		{"GET", "apis/core.kcp.io/v1alpha1/proxy/logicalclusters/cluster", forbidden},
		{"DELETE", "apis/core.kcp.io/v1alpha1/namespaces/default/logicalclusters/cluster", forbidden},
		{"GET", "apis/core.kcp.io/v1alpha1/watch/namespaces/default/logicalclusters", forbidden},
		{"GET", "apis/core.kcp.io/v1alpha1/shards/logicalclusters", ok},
		{"GET", "apis/other.io/v1/logicalclusters", ok},
		// Nothing else of the shard.
		{"GET", "", notFound},
		{"GET", "healthz", notFound},
		{"GET", "livez/etcd", notFound},
		{"GET", "metrics", notFound},
		{"GET", "debug/pprof/profile", notFound},
		{"GET", "openapi", notFound},
		{"GET", "version/x", notFound},
		{"GET", "clusters/other/api", notFound},
		{"GET", "services/initializingworkspaces/root:t/clusters/*/apis", notFound},
		{"GET", "logs/x", notFound},
	} {
		var segments []string
		if tc.path != "" {
			segments = strings.Split(tc.path, "/")
		}
		err := checkContent(tc.method, segments)
		got := ok
		if err != nil {
			got = int(err.(apierrors.APIStatus).Status().Code)
		}
		if got != tc.want {
			t.Errorf("%s /%s: %d (%v), want %d", tc.method, tc.path, got, err, tc.want)
		}
	}
}

// fakeShard stands for the shard: it answers the LogicalCluster of abc
// (waiting for root:me) and records every other request.
type fakeShard struct {
	mu   sync.Mutex
	seen []*http.Request
}

func (s *fakeShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet && r.URL.Path == "/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" {
		if r.Header.Get("Impersonate-User") != "" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		_, _ = w.Write([]byte(`{"apiVersion":"core.kcp.io/v1alpha1","kind":"LogicalCluster","metadata":{"name":"cluster","resourceVersion":"1"},"status":{"phase":"Initializing","initializers":["root:me"]}}`))
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, r.Clone(context.Background()))
	s.mu.Unlock()
	_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1"}`))
}

func (s *fakeShard) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// TestContentImpersonates checks what the content proxy sends the shard:
// the path it checked, and the initializer as an administrator of the
// workspace instead of the shard admin, whatever the client sent.
func TestContentImpersonates(t *testing.T) {
	fake := &fakeShard{}
	shard := httptest.NewServer(fake)
	defer shard.Close()
	h, err := New(Config{
		Loopback: &rest.Config{Host: shard.URL, BearerToken: "loopback-token"},
		Authorizer: authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
			return authorizer.DecisionAllow, "", nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, PathPrefix+"root:me/clusters/abc/api/v1/namespaces/seed/configmaps?fieldManager=me",
		strings.NewReader(`{"metadata":{"name":"x"}}`))
	for k, v := range map[string]string{
		"Authorization":              "Bearer client-token",
		"Impersonate-User":           "system:admin",
		"Impersonate-Group":          "system:masters",
		"Impersonate-Uid":            "1",
		"Impersonate-Extra-Scopes":   "x",
		"X-Remote-User":              "system:admin",
		"X-Remote-Group":             "system:masters",
		"Content-Type":               "application/json",
		"Accept":                     "application/json",
		"Impersonate-Extra-Anything": "y",
	} {
		req.Header.Set(k, v)
	}
	req = req.WithContext(request.WithUser(req.Context(), &user.DefaultInfo{Name: "alice"}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("code %d: %s", rec.Code, rec.Body)
	}
	seen := fake.requests()
	if len(seen) != 1 {
		t.Fatalf("the shard got %d content requests, want 1", len(seen))
	}
	got := seen[0]
	if got.Method != http.MethodPost || got.URL.RequestURI() != "/clusters/abc/api/v1/namespaces/seed/configmaps?fieldManager=me" {
		t.Errorf("the shard got %s %s", got.Method, got.URL.RequestURI())
	}
	identity := map[string][]string{}
	for k, vs := range got.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "impersonate-") || strings.HasPrefix(lk, "x-remote-") || lk == "authorization" {
			identity[k] = vs
		}
	}
	want := map[string][]string{
		"Authorization":     {"Bearer loopback-token"},
		"Impersonate-User":  {"system:kcp:initializer:root:me"},
		"Impersonate-Group": {"system:kcp:clusterworkspace:admin", "system:authenticated"},
	}
	if diff := cmp.Diff(want, identity); diff != "" {
		t.Errorf("identity headers the shard got (-want +got):\n%s", diff)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}

	// Refused requests do not reach the shard.
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{http.MethodDelete, "/apis/core.kcp.io/v1alpha1/logicalclusters%2Fcluster", http.StatusBadRequest},
		{http.MethodPut, "/apis/core.kcp.io/v1alpha1/logicalclusters%2Fcluster%2Fstatus", http.StatusBadRequest},
		{http.MethodDelete, "/apis/core.kcp.io/v1alpha1/namespaces/x/logicalclusters/cluster", http.StatusForbidden},
		{http.MethodGet, "/metrics", http.StatusNotFound},
		{http.MethodGet, "", http.StatusNotFound},
		{http.MethodPost, "/api", http.StatusMethodNotAllowed},
	} {
		r := httptest.NewRequest(tc.method, PathPrefix+"root:me/clusters/abc"+tc.path, nil)
		r = r.WithContext(request.WithUser(r.Context(), &user.DefaultInfo{Name: "alice"}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var st metav1.Status
		if rec.Code != tc.code || json.Unmarshal(rec.Body.Bytes(), &st) != nil || st.Kind != "Status" {
			t.Errorf("%s %s: %d %s, want a Status with %d", tc.method, tc.path, rec.Code, rec.Body, tc.code)
		}
	}
	if n := len(fake.requests()); n != 1 {
		t.Errorf("refused requests reached the shard: %d requests", n)
	}
}
