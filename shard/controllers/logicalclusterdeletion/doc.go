// Package logicalclusterdeletion deletes the content of logical clusters
// whose LogicalCluster is deleted, on one shard for all its logical
// clusters.
//
// The shard's registry puts the finalizer core.kcp.io/logicalcluster-deletion
// on every LogicalCluster. When the LogicalCluster "cluster" of a logical
// cluster X gets a deletionTimestamp, this controller calls
// DeleteClusterData(X), which removes every object of X except the
// LogicalCluster itself, honouring finalizers: while objects with
// finalizers remain it deletes them through the API and returns a WaitError
// whose condition reason (FinalizersRemainReason) and message this
// controller writes into a False WorkspaceContentDeleted condition; once
// none remain it range-deletes the rest. Not before two seconds after the
// deletion started (settleTime), it deletes the content once more, for the
// writes of requests admitted just before the shard saw the deletion; then
// it removes the finalizer, and the LogicalCluster goes away as the last
// object of X. If other finalizers remain on the LogicalCluster, it first sets the
// conditions WorkspaceContentDeleted and WorkspaceDeletionContentSuccess to
// True. A failed deletion sets WorkspaceDeletionContentSuccess=False (reason
// DeletionFailed) with the error and is retried with backoff; every step is
// idempotent, so a retry after a crash or a write conflict repeats
// DeleteClusterData (cheap once X is empty) and goes on.
//
// spec.owner gets no special treatment yet: the Workspace controllers will
// release the owner when its LogicalCluster is gone.
//
// # Wiring in the shard
//
// The shard implements DeleteClusterData (Server.DeleteClusterData in
// shard/server) with the etcd layout of shard/storage: every built-in
// resource prefix /registry/<prefix>/<cluster>/, and
// /registry/<group>/<resource>/customresources/<cluster>/ for the custom
// resources of the cluster's CRDs, but not
// /registry/core.kcp.io/logicalclusters/<cluster>/. The controller watches LogicalClusters
// through the factory's unstructured ForResource informer of
// core.kcp.io/v1alpha1 logicalclusters (shared with the shard's own use of
// it), so the factory's Clients must include Dynamic, and New must run
// before the factory starts. It writes with a client built from the shard's
// loopback config, an admin of every logical cluster (a trailing
// /clusters/<name> is ignored). *Controller has Name and Run(ctx) error, so
// in shard/server/controllers.go (newControllers):
//
//	lcd, err := logicalclusterdeletion.New(s.Generic.LoopbackClientConfig, s.Informers, s.DeleteClusterData)
//	if err != nil {
//		return fmt.Errorf("logical cluster deletion controller: %w", err)
//	}
//	s.controllers = append(s.controllers, lcd)
//
// Run waits for the informer to sync and returns when ctx is done and
// every reconcile in flight has finished.
package logicalclusterdeletion
