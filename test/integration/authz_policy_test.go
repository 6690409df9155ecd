package integration

import (
	"context"
	"io"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestAuthzBootstrapPolicyAndAggregation: the bootstrap policy is in
// system:admin, its admin/edit/view roles are aggregated, and a cluster's
// own aggregated ClusterRoles gather that cluster's roles only.
func TestAuthzBootstrapPolicyAndAggregation(t *testing.T) {
	s := framework.StartShard(t)
	admin := kube(t, s, logicalcluster.SystemAdmin).RbacV1()
	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:kcp:workspace:access", "system:discovery", "system:basic-user", "system:public-info-viewer"} {
		if _, err := admin.ClusterRoles().Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("bootstrap ClusterRole %s: %v", name, err)
		}
	}
	crb, err := admin.ClusterRoleBindings().Get(t.Context(), "cluster-admin", metav1.GetOptions{})
	if err != nil || len(crb.Subjects) == 0 || crb.Subjects[0].Name != "system:masters" {
		t.Errorf("ClusterRoleBinding cluster-admin: %v %v", crb, err)
	}
	eventually(t, controllerTimeout, "view to aggregate configmaps and admin to aggregate edit", func(ctx context.Context) (bool, error) {
		view, err := admin.ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		adm, err := admin.ClusterRoles().Get(ctx, "admin", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return grants(view.Rules, "get", "configmaps") && !grants(view.Rules, "get", "secrets") &&
			grants(adm.Rules, "delete", "secrets") && grants(adm.Rules, "create", "rolebindings"), nil
	})

	createCluster(t, s, "a")
	createCluster(t, s, "b")
	gather := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gather"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"gather": "true"}}}}}
	for _, c := range []logicalcluster.Name{"a", "b"} {
		if _, err := kube(t, s, c).RbacV1().ClusterRoles().Create(t.Context(), gather, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	part := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "part", Labels: map[string]string{"gather": "true"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"leases"}}}}
	if _, err := kube(t, s, "a").RbacV1().ClusterRoles().Create(t.Context(), part, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, controllerTimeout, "gather in a to aggregate part", func(ctx context.Context) (bool, error) {
		r, err := kube(t, s, "a").RbacV1().ClusterRoles().Get(ctx, "gather", metav1.GetOptions{})
		return err == nil && grants(r.Rules, "get", "leases"), err
	})
	if r, err := kube(t, s, "b").RbacV1().ClusterRoles().Get(t.Context(), "gather", metav1.GetOptions{}); err != nil || len(r.Rules) != 0 {
		t.Errorf("gather in b aggregated rules of a: %v %v", r.Rules, err)
	}
	// Removing the label takes the rules away again.
	if _, err := kube(t, s, "a").RbacV1().ClusterRoles().Patch(t.Context(), "part", "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"gather":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, controllerTimeout, "gather in a to drop part's rules", func(ctx context.Context) (bool, error) {
		r, err := kube(t, s, "a").RbacV1().ClusterRoles().Get(ctx, "gather", metav1.GetOptions{})
		return err == nil && len(r.Rules) == 0, err
	})
}

// grants tells whether rules grant verb on a core or RBAC resource.
func grants(rules []rbacv1.PolicyRule, verb, resource string) bool {
	for _, r := range rules {
		if (contains(r.Verbs, verb) || contains(r.Verbs, "*")) && (contains(r.Resources, resource) || contains(r.Resources, "*")) {
			return true
		}
	}
	return false
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// TestAuthzMetrics: decisions are counted by decision and stage, with no
// label naming a logical cluster.
func TestAuthzMetrics(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "carol-token,carol,carol-uid"))
	createCluster(t, s, "a")
	_, err := tokenClient(t, s, "a", "carol-token").CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	forbiddenBecause(t, "carol in a", err, "workspace access not permitted")

	body, err := kube(t, s, "").CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "tessera_authorization_decisions_total{") {
			lines = append(lines, l)
		}
	}
	if !strings.Contains(strings.Join(lines, "\n"), `tessera_authorization_decisions_total{decision="no_opinion",stage="content"}`) {
		t.Errorf("no count of the refusal in a:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.Contains(l, "cluster") {
			t.Errorf("metric with a cluster label: %s", l)
		}
	}
}
