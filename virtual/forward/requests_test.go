package forward

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestVerbAndLongRunning(t *testing.T) {
	for _, tc := range []struct {
		method, path       string
		named, legacyWatch bool
		verb               string
		longRunning        bool
	}{
		{http.MethodGet, "/services/x/a/clusters/c/api/v1/configmaps", false, false, "list", false},
		{http.MethodGet, "/services/x/a/clusters/c/api/v1/configmaps?watch=1", false, false, "watch", true},
		{http.MethodGet, "/services/x/a/clusters/c/api/v1/watch/configmaps", false, true, "watch", true},
		{http.MethodGet, "/services/x/a/clusters/c/api/v1/namespaces/n/configmaps/c", true, false, "get", false},
		{http.MethodDelete, "/services/x/a/clusters/c/api/v1/namespaces/n/configmaps", false, false, "deletecollection", false},
		{http.MethodPatch, "/services/x/a/clusters/c/api/v1/namespaces/n/configmaps/c", true, false, "patch", false},
		{"OPTIONS", "/services/x/a/clusters/c/api/v1/configmaps", false, false, "", false},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if got := Verb(req, tc.named, tc.legacyWatch); got != tc.verb {
			t.Errorf("%s %s: verb %q, want %q", tc.method, tc.path, got, tc.verb)
		}
		if got := IsLongRunning(req, "/services/x/", 3); got != tc.longRunning {
			t.Errorf("%s %s: long-running %v", tc.method, tc.path, got)
		}
	}
	if IsLongRunning(httptest.NewRequest(http.MethodGet, "/elsewhere?watch=true", nil), "/services/x/", 3) {
		t.Error("a path outside the prefix is long-running")
	}
}
