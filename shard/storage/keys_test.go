package storage

import (
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestClusterKey(t *testing.T) {
	for _, tc := range []struct {
		prefix, key string
		cluster     logicalcluster.Name
		want        string
		wantErr     bool
	}{
		{prefix: "/configmaps", key: "/configmaps/ns/name", cluster: "root", want: "/configmaps/root/ns/name"},
		{prefix: "/configmaps", key: "/configmaps", cluster: "root", want: "/configmaps/root"},
		{prefix: "/configmaps", key: "/configmaps/ns", cluster: "a:b", want: "/configmaps/a:b/ns"},
		{prefix: "/configmaps", key: "/configmapsx/ns", cluster: "root", wantErr: true},
		{prefix: "/configmaps", key: "/secrets/ns/name", cluster: "root", wantErr: true},
	} {
		got, err := clusterKey(tc.prefix, tc.cluster, tc.key)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("clusterKey(%q, %q, %q) = %q, %v", tc.prefix, tc.cluster, tc.key, got, err)
		}
		if err != nil {
			continue
		}
		back, err := clusterFromKey(tc.prefix, got)
		if err != nil || back != tc.cluster {
			t.Errorf("clusterFromKey(%q) = %q, %v", got, back, err)
		}
	}
	if _, err := clusterFromKey("/configmaps", "/configmaps"); err == nil {
		t.Errorf("a bare prefix has no cluster")
	}
	if _, err := clusterFromKey("/configmaps", "/configmaps//x"); err == nil {
		t.Errorf("an empty cluster segment is an error")
	}
}
