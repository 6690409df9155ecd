// Package authorization is the kcp authorizer chain of a shard, evaluated
// per logical cluster (the cluster of a request is in its context, see
// logicalcluster.ClusterFrom; authorizer.Attributes carry none).
//
// A request goes through these stages, in this order; the first that
// decides ends it:
//
//  1. public: GET and HEAD of /livez, /readyz, /healthz and /version (and
//     their subpaths) are allowed for anyone, including system:anonymous;
//  2. masters: members of system:masters (shard admins, the loopback
//     client) are allowed everything, as in Kubernetes;
//  3. guards: requests across all clusters (/clusters/*) and requests to
//     system:* clusters are denied; so are changes to LogicalClusters and
//     impersonating system:masters or the authentication.kcp.io/* user
//     extras, which would let a cluster admin out of its cluster;
//  4. workspace content: the cluster's LogicalCluster must exist (denied
//     otherwise, before any RBAC is read) and be Ready, unless the
//     ContentAdmin hook says the user administers the workspace content
//     (admin on workspaces/content in the parent; the workspaces issue
//     provides it). Service accounts of the cluster (user extra
//     ServiceAccountClusterExtraKey names it) are let into a Ready cluster;
//     service accounts of other clusters are denied. Users need verb
//     "access" on the non-resource path "/" from the ClusterRoleBindings of
//     the cluster or of system:admin, as ClusterRole
//     system:kcp:workspace:access and cluster-admin grant. Those let in get
//     the per-request group WorkspaceAccessGroup (and WorkspaceAdminGroup
//     through the hook), which the following stages see and bindings may
//     name;
//  5. required groups: if the LogicalCluster has the annotation
//     authorization.kcp.io/required-groups, users must be members of all
//     groups of one of its clauses ("a;b,c": a and b, or c). Service
//     accounts of the cluster are exempt, as in kcp;
//  6. maximal permission policy: an optional wrapper of the last stage
//     (Config.MaximalPermissionPolicy), left for APIExports;
//  7. policy: the local policy (RBAC of the request's cluster) or else the
//     bootstrap policy (RBAC of system:admin) must allow the request.
//     Bindings of a cluster may refer to ClusterRoles of system:admin.
//
// Every refusal carries a reason, which the API server puts into the 403
// Status it returns. Decisions are logged at V(4) with the cluster and
// counted in tessera_authorization_decisions_total by decision and stage,
// without a per-cluster label.
//
// The Authorizer is also the shard's authorizer.RuleResolver
// (SelfSubjectRulesReview, kubectl auth can-i --list): the rules of the
// local and bootstrap policy for the user with its per-request groups.
// PolicyRulesFor and RoleRefRules feed the RBAC escalation admission plugin.
//
// Nothing here is per cluster: one Store over the shard's wildcard
// informers, indexed by cluster and subject, serves every cluster.
package authorization
