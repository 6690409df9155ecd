// Package initializers runs the built-in initializers of the logical
// clusters of a shard, and gives their LogicalClusters a status.URL.
//
// For every LogicalCluster of the shard that is not being deleted:
//
//   - system:owner: the user in the annotation
//     experimental.tenancy.kcp.io/owner (JSON of an authentication/v1
//     UserInfo) becomes cluster-admin of the logical cluster through the
//     ClusterRoleBinding "workspace-admin"; then the initializer is removed
//     from status.initializers. A "workspace-admin" that exists already
//     counts only if it binds the ClusterRole cluster-admin; the owner is
//     added to its subjects if missing, and one with another roleRef
//     (immutable) is deleted and created anew. Without a usable owner
//     annotation nothing is bound and the initializer is removed all the
//     same (an error is logged), so the workspace does not hang.
//   - root:universal (the initializer of the universal WorkspaceType in
//     root): the namespace "default" is created; then the initializer is
//     removed.
//   - status.URL becomes <external URL of the shard>/clusters/<kcp.io/path
//     annotation, or the cluster name> (not for system:* clusters): set
//     when empty, and corrected when anybody wrote something else. It does
//     not wait for any initializer.
//
// Every step is idempotent, so a crash between creating an object and
// removing the initializer is repaired by the next reconcile. The status is written through the status subresource with the
// resourceVersion read; on a conflict the LogicalCluster is read again.
// When no initializer is left, the registry moves the phase to Ready.
//
// # Wiring in the shard
//
// New must run before the informer factory starts: it adds the factory's
// informer of core.kcp.io/v1alpha1 logicalclusters (shared with other
// controllers; the factory's Clients need KCP). It writes through
// Config.Loopback, the shard's admin config:
//
//	in, err := initializers.New(initializers.Config{
//		Informers:   s.Informers,
//		Loopback:    s.Generic.LoopbackClientConfig,
//		ExternalURL: externalURL, // the shard's spec.externalURL, or baseURL
//	})
//
// *Controller has Name and Run(ctx) error.
package initializers
