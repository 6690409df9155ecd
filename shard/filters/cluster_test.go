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

// FuzzParse parses arbitrary request paths: nothing panics; a path outside
// /clusters/ is served by system:admin unchanged; a path inside names a
// valid cluster or the wildcard (or is refused with 400) and leaves a rest
// that starts with "/" and that, joined back, is the request path.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"/", "/api/v1/namespaces", "/clusters/root/api/v1/namespaces", "/clusters/root:org:team/apis", "/clusters/*/api/v1/configmaps",
		"/clusters/root", "/clusters/", "/clusters", "/clusters//api", "/clusters/a::b/api", "/clusters/Root/api", "/clusters/root%3Aorg/apis",
		"/clusters/../api", "/clusters/./api", "/clusters/root/../../clusters/other/api", "/clustersx/api", "/clusters/a\x00b/api", "/clusters/*x/api"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		c, rest, err := parse(path)
		if err != nil {
			if !strings.HasPrefix(path, "/clusters") {
				t.Fatalf("parse(%q) refused a path outside /clusters: %v", path, err)
			}
			return
		}
		if !strings.HasPrefix(path, ClusterPrefix) {
			if c.Name != logicalcluster.SystemAdmin || c.Wildcard || rest != path {
				t.Fatalf("parse(%q) = %+v %q, want system:admin and the path unchanged", path, c, rest)
			}
			return
		}
		if !strings.HasPrefix(rest, "/") {
			t.Fatalf("parse(%q): rest %q does not start with /", path, rest)
		}
		segment := string(c.Name)
		if c.Wildcard {
			if c.Name != "" {
				t.Fatalf("parse(%q): wildcard with a name %q", path, c.Name)
			}
			segment = "*"
		} else if !logicalcluster.IsValidPath(segment) {
			t.Fatalf("parse(%q): invalid cluster %q accepted", path, segment)
		}
		joined := ClusterPrefix + segment + rest
		if joined != path && joined != path+"/" {
			t.Fatalf("parse(%q) = %q + %q, which joins to %q", path, segment, rest, joined)
		}
	})
}
