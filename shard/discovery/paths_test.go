package discovery

import (
	"net/url"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want request
	}{
		{"/apis", request{kind: apisPath}},
		{"/apis/", request{kind: apisPath}},
		{"/apis/example.com", request{kind: groupPath, gv: schema.GroupVersion{Group: "example.com"}}},
		{"/apis/example.com/", request{kind: groupPath, gv: schema.GroupVersion{Group: "example.com"}}},
		{"/apis/example.com/v1", request{kind: groupVersionPath, gv: schema.GroupVersion{Group: "example.com", Version: "v1"}}},
		{"/apis/example.com/v1/", request{kind: groupVersionPath, gv: schema.GroupVersion{Group: "example.com", Version: "v1"}}},
		{"/apis/example.com/v1/widgets", request{}},
		{"/apis/example.com/v1/namespaces/default/widgets", request{}},
		{"/apis//v1", request{}},
		{"/api", request{kind: coreAPIsPath}},
		{"/api/", request{kind: coreAPIsPath}},
		{"/api/v1", request{kind: coreVersionPath, gv: schema.GroupVersion{Version: "v1"}}},
		{"/api/v2", request{}},
		{"/api/v1/configmaps", request{}},
		{"/openapi/v2", request{kind: openAPIV2DocPath}},
		{"/openapi/v3", request{kind: openAPIV3RootPath}},
		{"/openapi/v3/apis/example.com/v1", request{kind: openAPIV3DocPath, openAPIV3Path: "apis/example.com/v1"}},
		{"/openapi/v3/api/v1", request{kind: openAPIV3DocPath, openAPIV3Path: "api/v1"}},
		{"/openapi/v3/", request{kind: openAPIV3DocPath, openAPIV3Path: ""}},
		{"/openapiv3", request{}},
		{"/healthz", request{}},
		{"/", request{}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if got := parsePath(tc.path); got != tc.want {
				t.Errorf("parsePath(%q) = %+v, want %+v", tc.path, got, tc.want)
			}
		})
	}
}

func TestRelativeLocation(t *testing.T) {
	for _, tc := range []struct {
		prefix, from, target string
	}{
		{"/clusters/root", "/openapi/v3/apis/apps/v1", "/openapi/v3/apis/apps/v1?hash=AB"},
		{"/clusters/root:org:team", "/openapi/v3/api/v1", "/openapi/v3/api/v1?hash=AB"},
		{"", "/openapi/v3/apis/apps/v1", "/openapi/v3/apis/apps/v1?hash=AB"},
		{"/services/x/clusters/y", "/openapi/v3/version", "/openapi/v3/version?hash=AB"},
		{"/clusters/a", "/top", "/other"},
	} {
		t.Run(tc.prefix+tc.from, func(t *testing.T) {
			base, err := url.Parse("https://shard.example" + tc.prefix + tc.from + "?hash=old")
			if err != nil {
				t.Fatal(err)
			}
			ref, err := url.Parse(relativeLocation(tc.from, tc.target))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := base.ResolveReference(ref).RequestURI(), tc.prefix+tc.target; got != want {
				t.Errorf("resolves to %q, want %q (reference %q)", got, want, ref)
			}
		})
	}
	if got := relativeLocation("/a/b", "https://elsewhere/x"); got != "https://elsewhere/x" {
		t.Errorf("an absolute URL was rewritten to %q", got)
	}
}
