package rbac

import (
	"fmt"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// newStore returns an IndexerStore over indexers shaped like the shard's
// informers, holding objs.
func newStore(t testing.TB, objs ...runtime.Object) *IndexerStore {
	t.Helper()
	withSubjects := informers.ClusterIndexers()
	maps.Copy(withSubjects, SubjectIndexers())
	roles := cache.NewIndexer(informers.KeyFunc, informers.ClusterIndexers())
	clusterRoles := cache.NewIndexer(informers.KeyFunc, informers.ClusterIndexers())
	roleBindings := cache.NewIndexer(informers.KeyFunc, withSubjects)
	clusterRoleBindings := cache.NewIndexer(informers.KeyFunc, withSubjects)
	for _, obj := range objs {
		var err error
		switch obj.(type) {
		case *rbacv1.Role:
			err = roles.Add(obj)
		case *rbacv1.ClusterRole:
			err = clusterRoles.Add(obj)
		case *rbacv1.RoleBinding:
			err = roleBindings.Add(obj)
		case *rbacv1.ClusterRoleBinding:
			err = clusterRoleBindings.Add(obj)
		default:
			t.Fatalf("unexpected %T", obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return NewIndexerStore(roles, roleBindings, clusterRoles, clusterRoleBindings)
}

func meta(cluster logicalcluster.Name, namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: map[string]string{logicalcluster.AnnotationKey: string(cluster)}}
}

func clusterRole(cluster logicalcluster.Name, name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: meta(cluster, "", name), Rules: rules}
}

func role(cluster logicalcluster.Name, namespace, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: meta(cluster, namespace, name), Rules: rules}
}

func clusterRoleBinding(cluster logicalcluster.Name, name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: meta(cluster, "", name), Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}}
}

func roleBinding(cluster logicalcluster.Name, namespace, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: meta(cluster, namespace, name), Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}}
}

func userSubject(name string) rbacv1.Subject  { return rbacv1.Subject{Kind: "User", Name: name} }
func groupSubject(name string) rbacv1.Subject { return rbacv1.Subject{Kind: "Group", Name: name} }

func TestSubjectIndexFunc(t *testing.T) {
	rb := roleBinding("a", "ns", "rb", "Role", "r",
		userSubject("alice"), groupSubject("devs"),
		rbacv1.Subject{Kind: "ServiceAccount", Name: "default"},
		rbacv1.Subject{Kind: "ServiceAccount", Name: "ci", Namespace: "other"},
		rbacv1.Subject{Kind: "Robot", Name: "r2d2"})
	got, err := SubjectIndexFunc(rb)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a|ns|User:alice", "a|ns|Group:devs", "a|ns|ServiceAccount:ns/default", "a|ns|ServiceAccount:other/ci"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RoleBinding keys (-want +got):\n%s", diff)
	}

	crb := clusterRoleBinding("a", "crb", "r", userSubject("alice"), rbacv1.Subject{Kind: "ServiceAccount", Name: "nons"})
	got, err = SubjectIndexFunc(crb)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a||User:alice"}, got); diff != "" {
		t.Errorf("ClusterRoleBinding keys (-want +got):\n%s", diff)
	}

	if _, err := SubjectIndexFunc(&rbacv1.Role{}); err == nil {
		t.Error("indexing a Role did not fail")
	}
}

func TestStoreBindingsFor(t *testing.T) {
	s := newStore(t,
		roleBinding("a", "ns", "b-user", "Role", "r", userSubject("alice")),
		roleBinding("a", "ns", "a-both", "Role", "r", userSubject("alice"), groupSubject("devs")),
		roleBinding("a", "ns", "c-group", "Role", "r", groupSubject("devs")),
		roleBinding("a", "ns", "other-user", "Role", "r", userSubject("bob")),
		roleBinding("a", "other", "other-ns", "Role", "r", userSubject("alice")),
		roleBinding("b", "ns", "other-cluster", "Role", "r", userSubject("alice")),
		roleBinding("a", "ns", "sa", "Role", "r", rbacv1.Subject{Kind: "ServiceAccount", Name: "builder"}),
		clusterRoleBinding("a", "crb", "r", groupSubject("devs")),
		clusterRoleBinding("b", "crb", "r", groupSubject("devs")),
	)
	names := func(bs []*rbacv1.RoleBinding) []string {
		var out []string
		for _, b := range bs {
			out = append(out, fmt.Sprintf("%s/%s", logicalcluster.From(b), b.Name))
		}
		return out
	}
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"devs"}}
	got, err := s.RoleBindings("a", "ns", alice)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/a-both", "a/b-user", "a/c-group"}, names(got)); diff != "" {
		t.Errorf("RoleBindings of alice (-want +got):\n%s", diff)
	}
	got, err = s.RoleBindings("a", "ns", &user.DefaultInfo{Name: "system:serviceaccount:ns:builder"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/sa"}, names(got)); diff != "" {
		t.Errorf("RoleBindings of the service account (-want +got):\n%s", diff)
	}
	crbs, err := s.ClusterRoleBindings("b", alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(crbs) != 1 || logicalcluster.From(crbs[0]) != "b" {
		t.Errorf("ClusterRoleBindings of b = %v", crbs)
	}
}
