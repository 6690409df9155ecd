package bootstrap

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
)

const (
	// WorkspaceAccessClusterRole grants verb access on "/": bound in a
	// logical cluster, it lets its subjects in.
	WorkspaceAccessClusterRole = "system:kcp:workspace:access"

	// UniversalWorkspaceTypeUseClusterRole grants verb use on the workspace
	// type universal; it is bound to system:authenticated.
	UniversalWorkspaceTypeUseClusterRole = "system:kcp:workspacetype:universal:use"

	// AutoUpdateAnnotationKey set to "false" on a default object keeps
	// Ensure from changing it.
	AutoUpdateAnnotationKey = "rbac.authorization.kubernetes.io/autoupdate"

	// aggregateLabelPrefix prefixes the labels that aggregate ClusterRoles
	// into admin, edit and view.
	aggregateLabelPrefix = "rbac.authorization.k8s.io/aggregate-to-"

	// bootstrappingLabelKey marks the default objects, with the value
	// "rbac-defaults", as in Kubernetes.
	bootstrappingLabelKey = "kubernetes.io/bootstrapping"
)

// Verb sets of the default roles.
var (
	read      = []string{"get", "list", "watch"}
	write     = []string{"create", "delete", "deletecollection", "patch", "update"}
	readWrite = append(append([]string{}, read...), write...)
)

// policyRule builds a resource rule.
func policyRule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

// urlRule builds a non-resource rule.
func urlRule(verbs []string, urls ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls}
}

// objectMeta is the metadata of a default object; aggregateTo adds the
// aggregation labels of the roles it contributes to.
func objectMeta(name string, aggregateTo ...string) metav1.ObjectMeta {
	labels := map[string]string{bootstrappingLabelKey: "rbac-defaults"}
	for _, to := range aggregateTo {
		labels[aggregateLabelPrefix+to] = "true"
	}
	return metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{AutoUpdateAnnotationKey: "true"}}
}

// aggregationOf selects the ClusterRoles that aggregate into role.
func aggregationOf(role string) *rbacv1.AggregationRule {
	return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{aggregateLabelPrefix + role: "true"}},
	}}
}

// ClusterRoles returns the default ClusterRoles, freshly built.
func ClusterRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		{
			ObjectMeta: objectMeta("cluster-admin"),
			Rules: []rbacv1.PolicyRule{
				policyRule([]string{rbacv1.VerbAll}, rbacv1.APIGroupAll, rbacv1.ResourceAll),
				urlRule([]string{rbacv1.VerbAll}, rbacv1.NonResourceAll),
			},
		},
		// admin, edit and view get their rules from the aggregation
		// controller; each is aggregated into the one above it.
		{ObjectMeta: objectMeta("admin"), AggregationRule: aggregationOf("admin")},
		{ObjectMeta: objectMeta("edit", "admin"), AggregationRule: aggregationOf("edit")},
		{ObjectMeta: objectMeta("view", "edit"), AggregationRule: aggregationOf("view")},
		{ObjectMeta: objectMeta("system:aggregate-to-admin", "admin"), Rules: adminRules()},
		{ObjectMeta: objectMeta("system:aggregate-to-edit", "edit"), Rules: editRules()},
		{ObjectMeta: objectMeta("system:aggregate-to-view", "view"), Rules: viewRules()},
		{
			ObjectMeta: objectMeta(WorkspaceAccessClusterRole),
			Rules:      []rbacv1.PolicyRule{urlRule([]string{"access"}, "/")},
		},
		{
			ObjectMeta: objectMeta("system:discovery"),
			Rules: []rbacv1.PolicyRule{urlRule([]string{"get"},
				"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*",
				"/healthz", "/livez", "/readyz", "/version", "/version/")},
		},
		{
			ObjectMeta: objectMeta("system:basic-user"),
			Rules: []rbacv1.PolicyRule{
				policyRule([]string{"create"}, "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
				policyRule([]string{"create"}, "authentication.k8s.io", "selfsubjectreviews"),
			},
		},
		{
			// Every authenticated user may create universal workspaces
			// wherever the parent's type allows them.
			ObjectMeta: objectMeta(UniversalWorkspaceTypeUseClusterRole),
			Rules: []rbacv1.PolicyRule{{
				Verbs: []string{"use"}, APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{"universal"},
			}},
		},
		{
			ObjectMeta: objectMeta("system:public-info-viewer"),
			Rules:      []rbacv1.PolicyRule{urlRule([]string{"get"}, "/healthz", "/livez", "/readyz", "/version", "/version/")},
		},
	}
}

// ClusterRoleBindings returns the default ClusterRoleBindings, freshly
// built.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return []rbacv1.ClusterRoleBinding{
		bindGroups("cluster-admin", "cluster-admin", user.SystemPrivilegedGroup),
		// kcp's admin user (the admin kubeconfig's root and base contexts)
		// administers every workspace, without being a shard admin.
		bindGroups("system:kcp:admin", "cluster-admin", "system:kcp:admin"),
		bindGroups("system:discovery", "system:discovery", user.AllAuthenticated),
		bindGroups("system:basic-user", "system:basic-user", user.AllAuthenticated),
		// Admins of a workspace's content in its parent enter it before it
		// is Ready with this per-request group.
		bindGroups("system:kcp:clusterworkspace:admin", "cluster-admin", "system:kcp:clusterworkspace:admin"),
		bindGroups(UniversalWorkspaceTypeUseClusterRole, UniversalWorkspaceTypeUseClusterRole, user.AllAuthenticated),
		bindGroups("system:public-info-viewer", "system:public-info-viewer", user.AllAuthenticated, user.AllUnauthenticated),
	}
}

// bindGroups binds a ClusterRole to groups.
func bindGroups(name, role string, groups ...string) rbacv1.ClusterRoleBinding {
	b := rbacv1.ClusterRoleBinding{
		ObjectMeta: objectMeta(name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
	}
	for _, g := range groups {
		b.Subjects = append(b.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: g})
	}
	return b
}

// viewRules may read most namespaced content, but not secrets or roles.
func viewRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		policyRule(read, "", "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
			"pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"),
		policyRule(read, "", "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
			"replicationcontrollers/status", "resourcequotas", "resourcequotas/status"),
		policyRule(read, "", "namespaces"),
		policyRule(read, "events.k8s.io", "events"),
		policyRule(read, "discovery.k8s.io", "endpointslices"),
		policyRule(read, "apps", "controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
			"deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"),
		policyRule(read, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
		policyRule(read, "batch", "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
		policyRule(read, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
		policyRule(read, "networking.k8s.io", "ingresses", "ingresses/status", "networkpolicies"),
		policyRule(read, "coordination.k8s.io", "leases"),
	}
}

// editRules may change most namespaced content and read secrets, but not
// roles and bindings.
func editRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		policyRule([]string{"impersonate"}, "", "serviceaccounts"),
		policyRule(readWrite, "", "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"),
		policyRule([]string{"create"}, "", "pods/eviction"),
		policyRule(readWrite, "", "configmaps", "endpoints", "events", "persistentvolumeclaims", "replicationcontrollers",
			"replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"),
		policyRule([]string{"create"}, "", "serviceaccounts/token"),
		policyRule(readWrite, "events.k8s.io", "events"),
		policyRule(readWrite, "discovery.k8s.io", "endpointslices"),
		policyRule(readWrite, "apps", "daemonsets", "deployments", "deployments/rollback", "deployments/scale",
			"replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"),
		policyRule(readWrite, "autoscaling", "horizontalpodautoscalers"),
		policyRule(readWrite, "batch", "cronjobs", "jobs"),
		policyRule(readWrite, "policy", "poddisruptionbudgets"),
		policyRule(readWrite, "networking.k8s.io", "ingresses", "networkpolicies"),
		policyRule(readWrite, "coordination.k8s.io", "leases"),
	}
}

// adminRules may also manage roles and bindings (within what RBAC lets
// them grant) and review access in their namespaces.
func adminRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		policyRule([]string{"create"}, "authorization.k8s.io", "localsubjectaccessreviews"),
		policyRule(readWrite, rbacv1.GroupName, "rolebindings", "roles"),
	}
}
