package authorization

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/bootstrap"
)

// BenchmarkChain measures one decision of the whole chain for a GET of a
// configmap: by a shard admin, and by a user whom RBAC allows in a cluster
// with 100 RoleBindings on a shard with 10,000 clusters with bindings.
func BenchmarkChain(b *testing.B) {
	const clusters, bindings = 10000, 100
	var objs []runtime.Object
	for _, r := range bootstrap.ClusterRoles() {
		objs = append(objs, inCluster(logicalcluster.SystemAdmin, &r))
	}
	for _, r := range bootstrap.ClusterRoleBindings() {
		objs = append(objs, inCluster(logicalcluster.SystemAdmin, &r))
	}
	objs = append(objs, inCluster(logicalcluster.SystemAdmin, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}},
	}))
	for c := range clusters {
		cluster := logicalcluster.Name(fmt.Sprintf("c%d", c))
		objs = append(objs,
			bindCluster(cluster, "access", bootstrap.WorkspaceAccessClusterRole, userSubject("user-0")),
			bindNamespace(cluster, "default", "user-0", "configmap-reader", userSubject("user-0")))
	}
	hot := logicalcluster.Name("hot")
	objs = append(objs, bindCluster(hot, "access", bootstrap.WorkspaceAccessClusterRole, groupSubject("team")))
	for i := range bindings {
		objs = append(objs, bindNamespace(hot, "default", fmt.Sprintf("user-%d", i), "configmap-reader", userSubject(fmt.Sprintf("user-%d", i))))
	}
	a, err := New(Config{
		Store: newStore(b, objs...),
		ClusterState: func(logicalcluster.Name) (ClusterState, bool, error) {
			return ClusterState{Phase: corev1alpha1.LogicalClusterPhaseReady}, true, nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := logicalcluster.WithName(context.Background(), hot)
	for _, bc := range []struct {
		name string
		user user.Info
	}{
		{"admin", someone("root", user.SystemPrivilegedGroup)},
		{"rbac-user", someone("user-57", "team")},
	} {
		attrs := get(bc.user, "configmaps", "default", "x")
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, reason, _ := a.Authorize(ctx, attrs); d != authorizer.DecisionAllow {
					b.Fatalf("%v: %s", d, reason)
				}
			}
		})
	}
}
