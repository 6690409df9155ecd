package server

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
)

func TestParseScope(t *testing.T) {
	for _, tc := range []struct {
		path      string
		want      replicated.Scope
		wantRest  string
		wantError bool
	}{
		{path: "/services/cache/shards/a/clusters/x/apis/apis.kcp.io/v1alpha1/apiexports", want: replicated.Scope{Shard: "a", Cluster: "x"}, wantRest: "/apis/apis.kcp.io/v1alpha1/apiexports"},
		{path: "/services/cache/shards/*/clusters/*/apis", want: replicated.Scope{Shard: "*", Cluster: "*"}, wantRest: "/apis"},
		{path: "/services/cache/shards/system:shard-1/clusters/root:org", want: replicated.Scope{Shard: "system:shard-1", Cluster: "root:org"}, wantRest: "/"},
		{path: "/services/cache/shards/a/clusters/x/", want: replicated.Scope{Shard: "a", Cluster: "x"}, wantRest: "/"},
		{path: "/services/cache", wantError: true},
		{path: "/services/cache/shards/a", wantError: true},
		{path: "/services/cache/shards/a/apis/g/v/r", wantError: true},
		{path: "/services/cache/shards//clusters/x/apis", wantError: true},
		{path: "/services/cache/shards/a/clusters//apis", wantError: true},
		{path: "/services/cache/shards/A/clusters/x/apis", wantError: true},
		{path: "/services/cache/shards/a/clusters/Root/apis", wantError: true},
		{path: "/services/cache/shards/a/clusters/x-/apis", wantError: true},
		{path: "/services/cache/shards/a/namespaces/x/apis", wantError: true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, rest, err := parseScope(tc.path)
			if tc.wantError {
				if !apierrors.IsBadRequest(err) {
					t.Errorf("want BadRequest, got %v (%v %q)", err, got, rest)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || rest != tc.wantRest {
				t.Errorf("got %v %q, want %v %q", got, rest, tc.want, tc.wantRest)
			}
		})
	}
}
