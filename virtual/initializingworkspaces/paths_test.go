package initializingworkspaces

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path     string
		want     target
		notFound bool
		bad      bool
	}{
		{
			path: "/services/initializingworkspaces/root:mytype/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters",
			want: target{initializer: "root:mytype", cluster: logicalcluster.Cluster{Wildcard: true},
				segments: []string{"apis", "core.kcp.io", "v1alpha1", "logicalclusters"}},
		},
		{
			path: "/services/initializingworkspaces/root%3Aorg%3Amytype/clusters/abc/api/v1/namespaces/default/configmaps/a%20b",
			want: target{initializer: "root:org:mytype", cluster: logicalcluster.Cluster{Name: "abc"},
				segments: []string{"api", "v1", "namespaces", "default", "configmaps", "a b"}},
		},
		{
			path: "/services/initializingworkspaces/system:owner/clusters/abc",
			want: target{initializer: "system:owner", cluster: logicalcluster.Cluster{Name: "abc"}},
		},
		{
			path: "/services/initializingworkspaces/root:mytype/clusters/*/apis/",
			want: target{initializer: "root:mytype", cluster: logicalcluster.Cluster{Wildcard: true}, segments: []string{"apis"}},
		},
		{
			path: "/services/initializingworkspaces/root:mytype/clusters/abc/apis/core.kcp.io/v1alpha1/logicalcluster%73/cluster",
			want: target{initializer: "root:mytype", cluster: logicalcluster.Cluster{Name: "abc"},
				segments: []string{"apis", "core.kcp.io", "v1alpha1", "logicalclusters", "cluster"}},
		},
		{path: "/services/initializingworkspaces/", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/namespaces/x", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/../../other/api", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/%2E%2E/x", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc//clusters/other/api", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/./v1", notFound: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/%2E/v1", notFound: true},
		// Escaped separators would split a segment on the shard, which
		// unescapes the path once: what was checked would not be what is
		// served.
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters%2Fcluster", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters%2fcluster%2Fstatus", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1/namespaces/default/configmaps/a%2Fb", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1%2F..%2F..%2Fother/namespaces", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1/namespaces/a%5Cb", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1/namespaces/a\\b", bad: true},
		// A '%' would be unescaped again by whatever unescapes twice.
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1/namespaces/a%252Fb", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1/namespaces/a%0Ab", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1/namespaces/a%00b", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/abc/api/v1/namespaces/a%zzb", bad: true},
		{path: "/services/apiexport/root/x/clusters/*/api", notFound: true},
		{path: "/services/initializingworkspaces/mytype/clusters/*/api", bad: true},
		{path: "/services/initializingworkspaces/Root:MyType/clusters/*/api", bad: true},
		{path: "/services/initializingworkspaces/root:/clusters/*/api", bad: true},
		{path: "/services/initializingworkspaces/system:/clusters/*/api", bad: true},
		{path: "/services/initializingworkspaces/root%2Fx:t/clusters/*/api", bad: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/Not_Valid/api", bad: true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := parsePath(tc.path)
			switch {
			case tc.notFound:
				if !apierrors.IsNotFound(err) {
					t.Fatalf("got %+v, %v; want NotFound", got, err)
				}
			case tc.bad:
				if !apierrors.IsBadRequest(err) {
					t.Fatalf("got %+v, %v; want BadRequest", got, err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(target{})); diff != "" {
					t.Fatalf("-want +got:\n%s", diff)
				}
			}
		})
	}
}

// TestRestPath checks that the path sent to the shard is rebuilt from the
// checked segments and means the same once the shard unescapes it.
func TestRestPath(t *testing.T) {
	for _, tc := range []struct {
		path, want string
	}{
		{"/apis/core.kcp.io/v1alpha1/logicalclusters", "/apis/core.kcp.io/v1alpha1/logicalclusters"},
		{"/apis/core.kcp.io/v1alpha1/logicalcluster%73/", "/apis/core.kcp.io/v1alpha1/logicalclusters"},
		{"/api/v1/namespaces/default/configmaps/a%20b", "/api/v1/namespaces/default/configmaps/a%20b"},
		{"/api/v1/namespaces/default/configmaps/a:b@c+d", "/api/v1/namespaces/default/configmaps/a:b@c+d"},
		{"/api/v1/namespaces/default/services/s/proxy/x%3Fy%3Bz", "/api/v1/namespaces/default/services/s/proxy/x%3Fy%3Bz"},
		{"/api/v1/namespaces/default/configmaps/%E2%9C%93", "/api/v1/namespaces/default/configmaps/%E2%9C%93"},
		{"", ""},
	} {
		got, err := parsePath(PathPrefix + "root:t/clusters/abc" + tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if got.restPath() != tc.want {
			t.Errorf("%s: rebuilt as %s, want %s", tc.path, got.restPath(), tc.want)
		}
		// The shard unescapes the path once and splits it at '/'.
		u, err := url.Parse("https://shard" + got.clusterPath() + got.restPath())
		if err != nil {
			t.Fatal(err)
		}
		if want := "/clusters/abc/" + strings.Join(got.segments, "/"); strings.TrimSuffix(u.Path, "/") != strings.TrimSuffix(want, "/") {
			t.Errorf("%s: the shard reads %s, want %s", tc.path, u.Path, want)
		}
	}
}

func TestURLFor(t *testing.T) {
	if got := URLFor("root:mytype"); got != "/services/initializingworkspaces/root:mytype" {
		t.Fatalf("URLFor: %s", got)
	}
	got, err := parsePath(URLFor("root:org:mytype") + "/clusters/*/api")
	if err != nil || got.initializer != "root:org:mytype" {
		t.Fatalf("parsePath(URLFor): %+v, %v", got, err)
	}
}

func TestParseLCPath(t *testing.T) {
	for _, tc := range []struct {
		path     string
		want     lcPath
		ok       bool
		notFound bool
	}{
		{path: "apis/core.kcp.io/v1alpha1/logicalclusters", ok: true},
		{path: "apis/core.kcp.io/v1alpha1/watch/logicalclusters", want: lcPath{watch: true}, ok: true},
		{path: "apis/core.kcp.io/v1alpha1/watch/logicalclusters/cluster", want: lcPath{watch: true, name: "cluster"}, ok: true},
		{path: "apis/core.kcp.io/v1alpha1/logicalclusters/cluster", want: lcPath{name: "cluster"}, ok: true},
		{path: "apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status", want: lcPath{name: "cluster", subresource: "status"}, ok: true},
		{path: "apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status/x", ok: true, notFound: true},
		{path: "apis/core.kcp.io/v1alpha1/watch/logicalclusters/cluster/status", ok: true, notFound: true},
		{path: "apis/core.kcp.io/v1alpha1/shards"},
		{path: "apis/core.kcp.io/v1alpha1"},
		{path: "apis/core.kcp.io/v1alpha1/watch"},
		{path: "apis/tenancy.kcp.io/v1alpha1/logicalclusters"},
		{path: "api/v1/namespaces"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, ok, err := parseLCPath(strings.Split(tc.path, "/"))
			if ok != tc.ok || apierrors.IsNotFound(err) != tc.notFound || (err != nil && !tc.notFound) {
				t.Fatalf("ok %v, err %v; want ok %v, not found %v", ok, err, tc.ok, tc.notFound)
			}
			if err == nil && got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestIsLongRunning(t *testing.T) {
	for path, want := range map[string]bool{
		"/services/initializingworkspaces/root:t/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters?watch=true":          true,
		"/services/initializingworkspaces/root:t/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters?watch=1":             true,
		"/services/initializingworkspaces/root:t/clusters/*/apis/core.kcp.io/v1alpha1/watch/logicalclusters":               true,
		"/services/initializingworkspaces/root:t/clusters/abc/api/v1/watch/namespaces/default/configmaps":                  true,
		"/services/initializingworkspaces/root:t/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters":                     false,
		"/services/initializingworkspaces/root:t/clusters/abc/api/v1/namespaces/watch":                                     false,
		"/services/initializingworkspaces/root:t/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters?watch=false":         false,
		"/clusters/abc/api/v1/configmaps?watch=true":                                                                       false,
		"/services/initializingworkspaces/root:t/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters/cluster?watch=yes": false,
	} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if got := IsLongRunning(req); got != want {
			t.Errorf("IsLongRunning(%s) = %v, want %v", path, got, want)
		}
	}
}

func TestValidateInitializer(t *testing.T) {
	for in, valid := range map[corev1alpha1.LogicalClusterInitializer]bool{
		"root:mytype":       true,
		"root:org:my-type":  true,
		"2x8f7ab:t1":        true,
		"system:owner":      true,
		"system:apibinding": true,
		"mytype":            false,
		":mytype":           false,
		"root:":             false,
		"root:My":           false,
		"root:-x":           false,
		"system:":           false,
		"system:a/b":        false,
		"system:a b":        false,
		"system:Owner":      false,
		"system:a\n":        false,
		"system:a%2F":       false,
		"system:kcp.io:x-1": true,
		"root::x":           false,
		"root:" + corev1alpha1.LogicalClusterInitializer(strings.Repeat("a", 64)): false,
	} {
		if err := validateInitializer(in); (err == nil) != valid {
			t.Errorf("validateInitializer(%q) = %v, want valid %v", in, err, valid)
		}
	}
}

func TestClusterOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		want logicalcluster.Cluster
		ok   bool
	}{
		{path: "/services/initializingworkspaces/root:mytype/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters", want: logicalcluster.Cluster{Wildcard: true}, ok: true},
		{path: "/services/initializingworkspaces/root%3Amytype/clusters/abc/api/v1/namespaces", want: logicalcluster.Cluster{Name: "abc"}, ok: true},
		{path: "/services/initializingworkspaces/root:mytype/clusters/Bad/api"},
		{path: "/services/initializingworkspaces/root:mytype"},
		{path: "/api/v1/namespaces"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, ok := ClusterOf(httptest.NewRequest(http.MethodGet, tc.path, nil))
			if ok != tc.ok || got != tc.want {
				t.Errorf("ClusterOf = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
