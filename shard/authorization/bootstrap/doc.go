// Package bootstrap holds the bootstrap RBAC policy of a shard: the
// ClusterRoles and ClusterRoleBindings that Kubernetes and kcp users expect,
// stored in the shard-local system:admin logical cluster, where the
// bootstrap policy authorizer reads them for requests to every logical
// cluster, and where bindings in any logical cluster find the ClusterRoles
// they refer to when their own cluster lacks them.
//
// The policy:
//
//   - cluster-admin (everything), bound to the group system:masters;
//   - admin, edit and view, aggregated like Kubernetes' from ClusterRoles
//     labelled rbac.authorization.k8s.io/aggregate-to-{admin,edit,view},
//     with the system:aggregate-to-* ClusterRoles that fill them;
//   - system:kcp:workspace:access (verb access on "/"), which a
//     ClusterRoleBinding in a logical cluster uses to let users in;
//   - system:discovery, system:basic-user and system:public-info-viewer,
//     bound to system:authenticated (the last also to system:unauthenticated):
//     discovery and OpenAPI paths, health and version, and the self reviews
//     (SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview).
//
// Ensure reconciles the policy through a client of system:admin at every
// start: it creates what is missing, adds missing rules, subjects, labels,
// annotations and aggregation selectors, and recreates a binding whose role
// reference changed. It never removes what an admin added. Objects
// annotated rbac.authorization.kubernetes.io/autoupdate=false are left
// alone, as Kubernetes does.
package bootstrap
