// Package rbacescalation is the shard's RBAC escalation prevention, an
// admission plugin that applies Kubernetes' rules per logical cluster:
// nobody may grant permissions they do not hold.
//
// On create and update of Roles, ClusterRoles, RoleBindings and
// ClusterRoleBindings in the request's logical cluster it refuses (403)
//
//   - a Role or ClusterRole with rules the requester does not hold in that
//     cluster (through the local policy of the cluster or the bootstrap
//     policy, in the role's namespace), unless the requester may "escalate"
//     that role;
//   - a ClusterRole with an aggregationRule (set now or before), unless the
//     requester holds every permission (cluster-admin) or may escalate it;
//   - a RoleBinding or ClusterRoleBinding to a role whose rules the
//     requester does not hold, unless the requester may "bind" that role
//     (resourceNames are honoured: bind on clusterroles named "view" allows
//     binding view only). ClusterRoles missing in the cluster are taken from
//     system:admin, as the authorizer does.
//
// Members of system:masters (shard admins, the loopback client and the
// shard's controllers) are never refused, and updates that change only
// owner references, finalizers or managed fields are let through, as
// upstream does. Refusals read like upstream's:
//
//	roles.rbac.authorization.k8s.io "r" is forbidden: user "u" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
//
// Kubernetes does this in the RBAC storage; a shard's RBAC storage is plain,
// so the check is an admission plugin instead. It runs in the validating
// phase, after defaulting, on the object that would be stored.
//
// # Wiring
//
//	plugin, err := rbacescalation.NewForAuthorizer(authz, loopback)
//	// authz: the shard's *authorization.Authorizer; loopback: its admin
//	// loopback config for the base URL, for live reads of roles the
//	// cache does not know yet (a role created just before its binding).
//
// and add it to the shard's admission chain (admission.NewChainHandler),
// which the custom resource handler shares. Until the RBAC informers have
// synced, writes of RBAC objects by non-admins wait up to 10 seconds and
// are then refused as not yet ready.
package rbacescalation
