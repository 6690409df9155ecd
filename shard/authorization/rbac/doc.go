// Package rbac evaluates Kubernetes RBAC per logical cluster: the Roles,
// ClusterRoles, RoleBindings and ClusterRoleBindings stored in one logical
// cluster decide what a user may do there, with upstream semantics.
//
// The package has three layers:
//
//   - pure matching: RuleAllows (does a PolicyRule allow a request),
//     AppliesTo (does a binding name a user), Covers (does one set of rules
//     hold another), CompactRules and CompactString for messages;
//   - a Resolver that walks the bindings of one logical cluster that apply
//     to a user and yields their rules (VisitRulesFor, RulesFor), over a
//     Store. ClusterRoles a binding refers to are looked up in the binding's
//     cluster first and then in a fallback cluster (system:admin, where the
//     bootstrap policy lives), as kcp does;
//   - an Authorizer that answers authorizer.Attributes with the RBAC of the
//     logical cluster a ClusterFunc picks per request: RequestCluster for
//     the local policy, FixedCluster(system:admin) for the bootstrap policy.
//
// NewInformerStore reads the shard's wildcard informers. Bindings are
// indexed by cluster, namespace and subject (SubjectIndex), so evaluating a
// request costs O(bindings that name the user or one of its groups), not
// O(bindings in the cluster) or O(bindings on the shard).
//
// Kubernetes' own implementation (k8s.io/kubernetes/plugin/pkg/auth/
// authorizer/rbac and pkg/registry/rbac/validation) cannot be imported; this
// package follows its behaviour, including reasons such as
//
//	RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"
//
// and NoOpinion, never Deny, when nothing allows a request.
package rbac
