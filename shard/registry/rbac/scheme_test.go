package rbac

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDefaults(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	subjects := []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "alice"},
		{Kind: rbacv1.GroupKind, Name: "devs"},
		{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "ci"},
		{Kind: rbacv1.UserKind, APIGroup: "example.com", Name: "kept"},
	}
	want := []rbacv1.Subject{
		{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"},
		{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"},
		{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "ci"},
		{Kind: rbacv1.UserKind, APIGroup: "example.com", Name: "kept"},
	}

	rb := &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"}, Subjects: append([]rbacv1.Subject(nil), subjects...)}
	s.Default(rb)
	if rb.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("roleRef.apiGroup %q", rb.RoleRef.APIGroup)
	}
	if diff := cmp.Diff(want, rb.Subjects); diff != "" {
		t.Errorf("role binding subjects (-want +got):\n%s", diff)
	}

	crbs := &rbacv1.ClusterRoleBindingList{Items: []rbacv1.ClusterRoleBinding{{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "r"}, Subjects: append([]rbacv1.Subject(nil), subjects...)}}}
	s.Default(crbs)
	if crbs.Items[0].RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("cluster roleRef.apiGroup %q", crbs.Items[0].RoleRef.APIGroup)
	}
	if diff := cmp.Diff(want, crbs.Items[0].Subjects); diff != "" {
		t.Errorf("cluster role binding subjects (-want +got):\n%s", diff)
	}
}

func TestStrategies(t *testing.T) {
	typer := runtime.NewScheme()
	if NewRoleStrategy(typer).NamespaceScoped() != true || NewRoleBindingStrategy(typer).NamespaceScoped() != true {
		t.Error("roles and role bindings are namespaced")
	}
	if NewClusterRoleStrategy(typer).NamespaceScoped() || NewClusterRoleBindingStrategy(typer).NamespaceScoped() {
		t.Error("cluster roles and cluster role bindings are cluster-scoped")
	}
	strategy := NewRoleBindingStrategy(typer)
	old := &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "a"}}
	changed := old.DeepCopy()
	changed.RoleRef.Name = "b"
	errs := strategy.ValidateUpdate(t.Context(), changed, old)
	found := false
	for _, err := range errs {
		found = found || err.Field == "roleRef"
	}
	if !found {
		t.Errorf("strategy accepted a roleRef change: %v", errs)
	}
	if !strategy.AllowCreateOnUpdate(t.Context()) {
		t.Error("RBAC objects are created by PUT")
	}
}
