package rbac

import (
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// scanStore is the store without SubjectIndex: it lists every binding of
// the namespace or cluster, as upstream's listers do. It is the baseline
// the benchmark compares the index with.
type scanStore struct{ *IndexerStore }

func (s scanStore) RoleBindings(cluster logicalcluster.Name, namespace string, _ user.Info) ([]*rbacv1.RoleBinding, error) {
	return informers.NewLister[*rbacv1.RoleBinding](s.roleBindings, rbacv1.Resource("rolebinding")).Cluster(cluster).Namespace(namespace).List(nil)
}

func (s scanStore) ClusterRoleBindings(cluster logicalcluster.Name, _ user.Info) ([]*rbacv1.ClusterRoleBinding, error) {
	return informers.NewLister[*rbacv1.ClusterRoleBinding](s.clusterRoleBindings, rbacv1.Resource("clusterrolebinding")).Cluster(cluster).List(nil)
}

// BenchmarkAuthorize measures one RBAC decision in a cluster with 100
// RoleBindings in the request's namespace on a shard with 10,000 clusters
// that have bindings of their own.
func BenchmarkAuthorize(b *testing.B) {
	const clusters, bindings = 10000, 100
	var objs []runtime.Object
	objs = append(objs, clusterRole(logicalcluster.SystemAdmin, "edit", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}))
	for c := range clusters {
		cluster := logicalcluster.Name(fmt.Sprintf("c%d", c))
		objs = append(objs,
			roleBinding(cluster, "default", "user-0", "ClusterRole", "edit", userSubject("user-0")),
			clusterRoleBinding(cluster, "access", "system:kcp:workspace:access", groupSubject("team")))
	}
	hot := logicalcluster.Name("hot")
	for i := range bindings {
		objs = append(objs, roleBinding(hot, "default", fmt.Sprintf("user-%d", i), "ClusterRole", "edit", userSubject(fmt.Sprintf("user-%d", i)), groupSubject(fmt.Sprintf("team-%d", i))))
	}
	store := newStore(b, objs...)
	ctx := inCluster(hot)
	attrs := authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: "user-57", Groups: []string{"system:authenticated", "team"}},
		Verb: "get", Resource: "configmaps", Namespace: "default", Name: "x", ResourceRequest: true,
	}
	for _, bc := range []struct {
		name  string
		store Store
	}{{"subject-index", store}, {"scan", scanStore{store}}} {
		a := New(NewResolver(bc.store, logicalcluster.SystemAdmin), RequestCluster)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, _, _ := a.Authorize(ctx, attrs); d != authorizer.DecisionAllow {
					b.Fatal("not allowed")
				}
			}
		})
	}
}
