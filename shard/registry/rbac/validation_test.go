package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var readPods = rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}

func firstErrorField(t *testing.T, errs field.ErrorList, want string) {
	t.Helper()
	if want == "" {
		if len(errs) != 0 {
			t.Fatalf("want valid, got %v", errs)
		}
		return
	}
	if len(errs) == 0 || errs[0].Field != want {
		t.Fatalf("want first error on %q, got %v", want, errs)
	}
}

func TestValidateRoles(t *testing.T) {
	role := func(rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "default", ResourceVersion: "1"}, Rules: rules}
	}
	clusterRole := func(rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:reader"}, Rules: rules}
	}
	healthz := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}
	tests := []struct {
		name      string
		errs      field.ErrorList
		wantField string
	}{
		{name: "role", errs: ValidateRole(role(readPods))},
		{name: "role without rules", errs: ValidateRole(role())},
		{name: "role with colon in name", errs: ValidateRole(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "system:x", Namespace: "default"}})},
		{name: "role name with slash", errs: ValidateRole(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "a/b", Namespace: "default"}}), wantField: "metadata.name"},
		{name: "role without namespace", errs: ValidateRole(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "a"}}), wantField: "metadata.namespace"},
		{name: "rule without verbs", errs: ValidateRole(role(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}})), wantField: "rules[0].verbs"},
		{name: "rule without api groups", errs: ValidateRole(role(rbacv1.PolicyRule{Verbs: []string{"get"}, Resources: []string{"pods"}})), wantField: "rules[0].apiGroups"},
		{name: "rule without resources", errs: ValidateRole(role(rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}})), wantField: "rules[0].resources"},
		{name: "role with non-resource URLs", errs: ValidateRole(role(healthz)), wantField: "rules[0].nonResourceURLs"},
		{name: "cluster role with non-resource URLs", errs: ValidateClusterRole(clusterRole(readPods, healthz))},
		{name: "mixed rule", errs: ValidateClusterRole(clusterRole(rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}, Resources: []string{"pods"}})), wantField: "rules[0].nonResourceURLs"},
		{name: "aggregated cluster role", errs: ValidateClusterRole(&rbacv1.ClusterRole{
			ObjectMeta:      metav1.ObjectMeta{Name: "view"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"aggregate-to-view": "true"}}}},
		})},
		{name: "empty aggregation rule", errs: ValidateClusterRole(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"}, AggregationRule: &rbacv1.AggregationRule{}}), wantField: "aggregationRule.clusterRoleSelectors"},
		{name: "bad aggregation selector", errs: ValidateClusterRole(&rbacv1.ClusterRole{
			ObjectMeta:      metav1.ObjectMeta{Name: "view"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a b": "c"}}}},
		}), wantField: "aggregationRule.clusterRoleSelectors[0].matchLabels"},
		{name: "cluster role with namespace", errs: ValidateClusterRole(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}}), wantField: "metadata.namespace"},
		{name: "role update", errs: ValidateRoleUpdate(role(), role(readPods))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { firstErrorField(t, tt.errs, tt.wantField) })
	}
}

func TestValidateBindings(t *testing.T) {
	user := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}
	group := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:authenticated"}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "ci"}
	roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}
	clusterRoleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}
	rb := func(ref rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: "default", ResourceVersion: "1"}, RoleRef: ref, Subjects: subjects}
	}
	crb := func(ref rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read", ResourceVersion: "1"}, RoleRef: ref, Subjects: subjects}
	}
	tests := []struct {
		name      string
		errs      field.ErrorList
		wantField string
	}{
		{name: "role binding to role", errs: ValidateRoleBinding(rb(roleRef, user, group, sa))},
		{name: "role binding to cluster role", errs: ValidateRoleBinding(rb(clusterRoleRef))},
		{name: "service account without namespace in role binding", errs: ValidateRoleBinding(rb(roleRef, rbacv1.Subject{Kind: "ServiceAccount", Name: "builder"}))},
		{name: "roleRef kind", errs: ValidateRoleBinding(rb(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Pod", Name: "x"})), wantField: "roleRef.kind"},
		{name: "roleRef apiGroup", errs: ValidateRoleBinding(rb(rbacv1.RoleRef{APIGroup: "example.com", Kind: "Role", Name: "x"})), wantField: "roleRef.apiGroup"},
		{name: "roleRef name", errs: ValidateRoleBinding(rb(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role"})), wantField: "roleRef.name"},
		{name: "subject kind", errs: ValidateRoleBinding(rb(roleRef, rbacv1.Subject{Kind: "Robot", Name: "r2"})), wantField: "subjects[0].kind"},
		{name: "subject name", errs: ValidateRoleBinding(rb(roleRef, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName})), wantField: "subjects[0].name"},
		{name: "user apiGroup", errs: ValidateRoleBinding(rb(roleRef, rbacv1.Subject{Kind: rbacv1.UserKind, Name: "alice"})), wantField: "subjects[0].apiGroup"},
		{name: "service account apiGroup", errs: ValidateRoleBinding(rb(roleRef, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, APIGroup: rbacv1.GroupName, Name: "x"})), wantField: "subjects[0].apiGroup"},
		{name: "service account bad name", errs: ValidateRoleBinding(rb(roleRef, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "Builder"})), wantField: "subjects[0].name"},
		{name: "cluster role binding", errs: ValidateClusterRoleBinding(crb(clusterRoleRef, user, sa))},
		{name: "cluster role binding to role", errs: ValidateClusterRoleBinding(crb(roleRef)), wantField: "roleRef.kind"},
		{name: "cluster role binding service account without namespace", errs: ValidateClusterRoleBinding(crb(clusterRoleRef, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "builder"})), wantField: "subjects[0].namespace"},
		{name: "role binding subjects may change", errs: ValidateRoleBindingUpdate(rb(roleRef, user), rb(roleRef))},
		{name: "role binding roleRef is immutable", errs: ValidateRoleBindingUpdate(rb(clusterRoleRef), rb(roleRef)), wantField: "roleRef"},
		{name: "cluster role binding roleRef is immutable", errs: ValidateClusterRoleBindingUpdate(crb(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}), crb(clusterRoleRef)), wantField: "roleRef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { firstErrorField(t, tt.errs, tt.wantField) })
	}
}
