package filters

import (
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
