package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		path    string
		cluster logicalcluster.Cluster
		rest    string
		wantErr bool
	}{
		{path: "/api/v1/namespaces", cluster: logicalcluster.Cluster{Name: logicalcluster.SystemAdmin}, rest: "/api/v1/namespaces"},
		{path: "/clusters/root/api/v1/namespaces", cluster: logicalcluster.Cluster{Name: "root"}, rest: "/api/v1/namespaces"},
		{path: "/clusters/root:org:team/apis", cluster: logicalcluster.Cluster{Name: "root:org:team"}, rest: "/apis"},
		{path: "/clusters/root%3Aorg/apis", wantErr: true},
		{path: "/clusters/%2A/apis", wantErr: true},
		{path: "/clusters/root", cluster: logicalcluster.Cluster{Name: "root"}, rest: "/"},
		{path: "/clusters/*/api/v1/configmaps", cluster: logicalcluster.Cluster{Wildcard: true}, rest: "/api/v1/configmaps"},
		{path: "/clusters/Root/api", wantErr: true},
		{path: "/clusters/a_b/api", wantErr: true},
		{path: "/clusters//api", wantErr: true},
		{path: "/clusters/", wantErr: true},
		{path: "/clusters", wantErr: true},
		{path: "/clusters/a::b/api", wantErr: true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			c, rest, err := parse(tc.path)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if c != tc.cluster || rest != tc.rest {
				t.Errorf("parse(%q) = %+v %q, want %+v %q", tc.path, c, rest, tc.cluster, tc.rest)
			}
		})
	}
}

func TestWithClusterResolver(t *testing.T) {
	paths := map[string]logicalcluster.Name{"root:org": "abc123", "root:org:team": "def456"}
	resolve := func(p logicalcluster.Path) (logicalcluster.Name, bool) {
		n, ok := paths[p.String()]
		return n, ok
	}
	var got logicalcluster.Cluster
	var gotPath string
	h := WithClusterResolver(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = logicalcluster.ClusterFrom(r.Context())
		gotPath = r.URL.Path
	}), nil, resolve)
	for _, tc := range []struct {
		path string
		want logicalcluster.Cluster
	}{
		{"/clusters/root:org/api/v1/namespaces", logicalcluster.Cluster{Name: "abc123", Path: "root:org"}},
		{"/clusters/root:org:team/apis", logicalcluster.Cluster{Name: "def456", Path: "root:org:team"}},
		// Names are not resolved, nor system clusters or the wildcard.
		{"/clusters/root/api", logicalcluster.Cluster{Name: "root"}},
		{"/clusters/system:admin/api", logicalcluster.Cluster{Name: "system:admin"}},
		{"/clusters/*/api/v1/configmaps", logicalcluster.Cluster{Wildcard: true}},
		// An unknown path stays what it is, which does not exist.
		{"/clusters/root:nope/api", logicalcluster.Cluster{Name: "root:nope"}},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, tc.path, nil))
		if got != tc.want {
			t.Errorf("%s: cluster %+v, want %+v", tc.path, got, tc.want)
		}
		if strings.HasPrefix(gotPath, "/clusters") {
			t.Errorf("%s: the handler saw path %s", tc.path, gotPath)
		}
	}
}
