package fairness

import (
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestClusterDigestNamesUsersByCluster(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"team", user.AllAuthenticated}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "list", Resource: "configmaps", Namespace: "default"}
	tests := []struct {
		name    string
		cluster *logicalcluster.Cluster
		u       user.Info
		want    string
	}{
		{"tenant in a", &logicalcluster.Cluster{Name: "a"}, alice, "a|alice"},
		{"same tenant in b", &logicalcluster.Cluster{Name: "b"}, alice, "b|alice"},
		{"sibling name", &logicalcluster.Cluster{Name: "a-b"}, alice, "a-b|alice"},
		{"shard admin keeps its name", &logicalcluster.Cluster{Name: "a"}, admin, "admin"},
		{"wildcard", &logicalcluster.Cluster{Wildcard: true}, alice, "alice"},
		{"no cluster", nil, alice, "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.cluster != nil {
				ctx = logicalcluster.WithCluster(ctx, *tt.cluster)
			}
			d := ClusterDigest(ctx, utilflowcontrol.RequestDigest{RequestInfo: info, User: tt.u})
			if got := d.User.GetName(); got != tt.want {
				t.Errorf("flow user %q, want %q", got, tt.want)
			}
			if got := d.User.GetGroups(); len(got) != len(tt.u.GetGroups()) {
				t.Errorf("groups changed: %v", got)
			}
			if d.RequestInfo != info {
				t.Error("request info replaced")
			}
		})
	}
}
