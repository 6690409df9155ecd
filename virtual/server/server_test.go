package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) })
	}
	for _, tc := range []struct {
		synced bool
		path   string
		code   int
		body   string
	}{
		{true, "/services/apiexport/root/e/clusters/*/apis", http.StatusOK, "apiexport"},
		{true, "/services/initializingworkspaces/root:t/clusters/*/apis", http.StatusOK, "initializing"},
		{true, "/services/syncer/c/kind/uid/clusters/*/api/v1/configmaps", http.StatusOK, "syncer"},
		{true, "/clusters/root/api", http.StatusNotFound, `"reason":"NotFound"`},
		{false, "/services/syncer/c/kind/uid/clusters/*/api/v1/configmaps", http.StatusServiceUnavailable, `"reason":"ServiceUnavailable"`},
		{false, "/services/apiexport/root/e/clusters/*/apis", http.StatusServiceUnavailable, `"reason":"ServiceUnavailable"`},
		{false, "/clusters/root/api", http.StatusNotFound, `"reason":"NotFound"`},
	} {
		h := dispatch(func() bool { return tc.synced }, named("initializing"), named("apiexport"), named("syncer"))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("synced=%v %s: %d %s, want %d %s", tc.synced, tc.path, rec.Code, rec.Body.String(), tc.code, tc.body)
		}
	}
}
