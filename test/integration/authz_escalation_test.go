package integration

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestAuthzEscalationPrevention: a namespace admin can hand out what it
// holds, not more, unless it may escalate or bind; a cluster admin of a
// holds everything in a, and nothing in b.
func TestAuthzEscalationPrevention(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "alice-token,alice,alice-uid", "root-token,root,root-uid"))
	createCluster(t, s, "a")
	createCluster(t, s, "b")
	bindClusterRole(t, s, "a", "", "alice-access", "system:kcp:workspace:access", authzUser("alice"))
	bindClusterRole(t, s, "a", "default", "alice-admin", "admin", authzUser("alice"))
	bindClusterRole(t, s, "a", "", "root-admin", "cluster-admin", authzUser("root"))
	bindClusterRole(t, s, "b", "", "root-access", "system:kcp:workspace:access", authzUser("root"))

	alice := tokenClient(t, s, "a", "alice-token").RbacV1()
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	}
	bindingFor := func(subject, name, kind, roleName string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName},
			Subjects: []rbacv1.Subject{authzUser(subject)}}
	}
	binding := func(name, kind, roleName string) *rbacv1.RoleBinding { return bindingFor("eve", name, kind, roleName) }
	readConfigMaps := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}
	signCSRs := rbacv1.PolicyRule{Verbs: []string{"create", "list"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}}

	eventuallyAllowed(t, "alice creates a role with rules she holds", func(ctx context.Context) error {
		_, err := alice.Roles("default").Create(ctx, role("cm-reader", readConfigMaps), metav1.CreateOptions{})
		return err
	})
	_, err := alice.Roles("default").Create(t.Context(), role("csr-signer", readConfigMaps, signCSRs), metav1.CreateOptions{})
	forbiddenBecause(t, "alice creates a role with more than she has", err,
		`roles.rbac.authorization.k8s.io "csr-signer" is forbidden`,
		`user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`,
		`{APIGroups:["certificates.k8s.io"], Resources:["certificatesigningrequests"], Verbs:["create" "list"]}`)

	_, err = alice.Roles("default").Update(t.Context(), role("cm-reader", readConfigMaps, signCSRs), metav1.UpdateOptions{})
	forbiddenBecause(t, "alice widens a role beyond what she has", err, "attempting to grant RBAC permissions not currently held")

	if _, err := alice.RoleBindings("default").Create(t.Context(), binding("eve-view", "ClusterRole", "view"), metav1.CreateOptions{}); err != nil {
		t.Errorf("alice binds view, which she holds: %v", err)
	}
	if _, err := alice.RoleBindings("default").Create(t.Context(), binding("eve-cm", "Role", "cm-reader"), metav1.CreateOptions{}); err != nil {
		t.Errorf("alice binds her own role: %v", err)
	}
	_, err = alice.RoleBindings("default").Create(t.Context(), binding("eve-admin", "ClusterRole", "cluster-admin"), metav1.CreateOptions{})
	forbiddenBecause(t, "alice binds cluster-admin", err, `rolebindings.rbac.authorization.k8s.io "eve-admin" is forbidden`, "not currently held")

	// The cluster admin of a lets alice bind cluster-admin (by name only)
	// and escalate roles in default.
	root := tokenClient(t, s, "a", "root-token").RbacV1()
	eventuallyAllowed(t, "the cluster admin creates a role allowing bind and escalate", func(ctx context.Context) error {
		_, err := root.Roles("default").Create(ctx, role("delegate",
			rbacv1.PolicyRule{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"cluster-admin"}},
			rbacv1.PolicyRule{Verbs: []string{"escalate"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}},
		), metav1.CreateOptions{})
		return err
	})
	if _, err := root.RoleBindings("default").Create(t.Context(), bindingFor("alice", "alice-delegate", "Role", "delegate"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventuallyAllowed(t, "alice binds cluster-admin with bind on it", func(ctx context.Context) error {
		_, err := alice.RoleBindings("default").Create(ctx, binding("eve-admin", "ClusterRole", "cluster-admin"), metav1.CreateOptions{})
		return err
	})
	if _, err := alice.RoleBindings("default").Create(t.Context(), binding("eve-edit", "ClusterRole", "system:aggregate-to-edit"), metav1.CreateOptions{}); err != nil {
		t.Errorf("alice binds a bootstrap role she holds all rules of: %v", err)
	}
	metricsReader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}}
	if _, err := kube(t, s, "a").RbacV1().ClusterRoles().Create(t.Context(), metricsReader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, authzTimeout, "the metrics-reader ClusterRole to be known", func(ctx context.Context) (bool, error) {
		_, err := alice.RoleBindings("default").Create(ctx, binding("eve-metrics", "ClusterRole", "metrics-reader"), metav1.CreateOptions{})
		return err != nil && !strings.Contains(err.Error(), "not found"), nil
	})
	_, err = alice.RoleBindings("default").Create(t.Context(), binding("eve-metrics", "ClusterRole", "metrics-reader"), metav1.CreateOptions{})
	forbiddenBecause(t, "alice binds a role with a URL rule she does not hold", err, `{NonResourceURLs:["/metrics"], Verbs:["get"]}`)
	if _, err := alice.Roles("default").Create(t.Context(), role("csr-signer", readConfigMaps, signCSRs), metav1.CreateOptions{}); err != nil {
		t.Errorf("alice creates a role beyond her rules with escalate: %v", err)
	}

	// Aggregated ClusterRoles need every permission.
	aggregated := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gather-all"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"gather": "true"}}}}}
	if _, err := root.ClusterRoles().Create(t.Context(), aggregated, metav1.CreateOptions{}); err != nil {
		t.Errorf("the cluster admin of a creates an aggregated ClusterRole: %v", err)
	}

	// root holds everything in a, but only access in b: it cannot create
	// roles there, and RBAC refuses before any escalation check.
	_, err = tokenClient(t, s, "b", "root-token").RbacV1().Roles("default").Create(t.Context(), role("r", readConfigMaps), metav1.CreateOptions{})
	forbiddenBecause(t, "the cluster admin of a creates a role in b", err, `neither the policy of logical cluster "b"`)
}
