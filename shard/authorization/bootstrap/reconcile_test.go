package bootstrap

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

func TestPolicy(t *testing.T) {
	roles := map[string]rbacv1.ClusterRole{}
	for _, r := range ClusterRoles() {
		if _, dup := roles[r.Name]; dup {
			t.Errorf("ClusterRole %s twice", r.Name)
		}
		roles[r.Name] = r
	}
	for _, b := range ClusterRoleBindings() {
		if _, ok := roles[b.RoleRef.Name]; !ok {
			t.Errorf("ClusterRoleBinding %s refers to missing ClusterRole %s", b.Name, b.RoleRef.Name)
		}
	}
	// Every aggregation selector finds a role.
	for _, r := range roles {
		if r.AggregationRule == nil {
			continue
		}
		found := false
		for _, other := range roles {
			for k, v := range r.AggregationRule.ClusterRoleSelectors[0].MatchLabels {
				if other.Labels[k] == v {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("nothing aggregates into %s", r.Name)
		}
	}
	// view < edit < admin, and edit cannot touch RBAC.
	if ok, _ := rbac.Covers(append(editRules(), viewRules()...), viewRules()); !ok {
		t.Error("edit does not include view")
	}
	rbacWrite := []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}}}
	if ok, _ := rbac.Covers(append(editRules(), viewRules()...), rbacWrite); ok {
		t.Error("edit may create roles")
	}
	if ok, _ := rbac.Covers(viewRules(), []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}); ok {
		t.Error("view may read secrets")
	}
}

func TestReconcileClusterRole(t *testing.T) {
	desired := &rbacv1.ClusterRole{
		ObjectMeta: objectMeta("r"),
		Rules:      []rbacv1.PolicyRule{policyRule([]string{"get", "list"}, "", "pods")},
	}
	for _, tc := range []struct {
		name     string
		existing *rbacv1.ClusterRole
		want     *rbacv1.ClusterRole
		changed  bool
	}{
		{"up to date", desired.DeepCopy(), desired, false},
		{"rules covered by broader ones", &rbacv1.ClusterRole{ObjectMeta: objectMeta("r"),
			Rules: []rbacv1.PolicyRule{policyRule([]string{"*"}, "", "pods")}},
			&rbacv1.ClusterRole{ObjectMeta: objectMeta("r"), Rules: []rbacv1.PolicyRule{policyRule([]string{"*"}, "", "pods")}}, false},
		{"missing rule added, admin's kept", &rbacv1.ClusterRole{ObjectMeta: objectMeta("r"),
			Rules: []rbacv1.PolicyRule{policyRule([]string{"get"}, "", "secrets")}},
			&rbacv1.ClusterRole{ObjectMeta: objectMeta("r"), Rules: []rbacv1.PolicyRule{policyRule([]string{"get"}, "", "secrets"), policyRule([]string{"get", "list"}, "", "pods")}}, true},
		{"missing labels added, admin's values kept", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"kubernetes.io/bootstrapping": "custom"}},
			Rules: desired.Rules},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"kubernetes.io/bootstrapping": "custom"},
				Annotations: map[string]string{AutoUpdateAnnotationKey: "true"}}, Rules: desired.Rules}, true},
		{"autoupdate=false is left alone", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: map[string]string{AutoUpdateAnnotationKey: "false"}}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: map[string]string{AutoUpdateAnnotationKey: "false"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.existing.DeepCopy()
			got, changed := reconcileClusterRole(tc.existing, desired)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("role (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.existing); diff != "" {
				t.Errorf("existing was modified:\n%s", diff)
			}
		})
	}

	t.Run("aggregated roles get selectors, not rules", func(t *testing.T) {
		admin := ClusterRoles()[1]
		existing := &rbacv1.ClusterRole{ObjectMeta: objectMeta("admin"), Rules: []rbacv1.PolicyRule{policyRule([]string{"get"}, "", "pods")}}
		got, changed := reconcileClusterRole(existing, &admin)
		if !changed || got.AggregationRule == nil || len(got.AggregationRule.ClusterRoleSelectors) != 1 || len(got.Rules) != 1 {
			t.Errorf("got %+v, changed %v", got, changed)
		}
		if _, changed := reconcileClusterRole(got, &admin); changed {
			t.Error("second reconcile changed the role again")
		}
	})
}

func TestReconcileClusterRoleBinding(t *testing.T) {
	desired := bindGroups("b", "view", "system:authenticated")
	admins := rbacv1.Subject{Kind: "Group", Name: "admins"}
	for _, tc := range []struct {
		name     string
		existing rbacv1.ClusterRoleBinding
		want     rbacv1.ClusterRoleBinding
		change   bindingChange
	}{
		{"up to date", desired, desired, bindingUnchanged},
		{"missing subject added, admin's kept", func() rbacv1.ClusterRoleBinding {
			b := desired
			b.Subjects = []rbacv1.Subject{admins}
			return b
		}(), func() rbacv1.ClusterRoleBinding {
			b := desired
			b.Subjects = append([]rbacv1.Subject{admins}, desired.Subjects...)
			return b
		}(), bindingUpdate},
		{"other role reference: recreated", func() rbacv1.ClusterRoleBinding {
			b := bindGroups("b", "edit", "system:authenticated")
			b.Subjects = append(b.Subjects, admins)
			return b
		}(), func() rbacv1.ClusterRoleBinding {
			b := desired
			b.Subjects = append(append([]rbacv1.Subject{}, desired.Subjects...), admins)
			return b
		}(), bindingRecreate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, change := reconcileClusterRoleBinding(&tc.existing, &desired)
			if change != tc.change {
				t.Errorf("change = %v, want %v", change, tc.change)
			}
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("binding (-want +got):\n%s", diff)
			}
		})
	}
}
