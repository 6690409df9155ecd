// Package namespace holds the shard's namespace lifecycle controller. When a
// namespace of any logical cluster is being deleted (it has a
// deletionTimestamp, phase Terminating, and "kubernetes" in
// spec.finalizers), the controller deletes every namespaced object of every
// resource served in that logical cluster in that namespace, waits until
// they are gone, and then removes "kubernetes" from spec.finalizers through
// the namespaces/<name>/finalize subresource (PUT); the registry deletes the
// namespace when no finalizer is left.
//
// # How
//
// One controller serves all logical clusters of a shard: it watches the
// wildcard namespace informer and enqueues only namespaces with a
// deletionTimestamp, keyed {Cluster, Name}. A pass over a namespace
//
//  1. re-reads the namespace from the API server, so that content is never
//     deleted on the word of a stale cache;
//  2. discovers the namespaced resources of its logical cluster (built-in
//     and that cluster's CRDs, preferred versions, those that can be listed
//     and deleted) through a discovery client for that cluster;
//  3. per resource, calls deletecollection with background propagation when
//     the resource supports it, else lists and deletes each object with a
//     UID precondition, and lists again to count what is left and which
//     finalizers hold it (objects with finalizers may linger);
//  4. writes upstream's status conditions (NamespaceDeletionDiscoveryFailure,
//     NamespaceDeletionGroupVersionParsingFailure,
//     NamespaceDeletionContentFailure, NamespaceContentRemaining,
//     NamespaceFinalizersRemaining) when they change, through the status
//     subresource;
//  5. retries with the controller's rate-limited backoff on errors and on
//     partial discovery (a group that could not be discovered may hold
//     objects), requeues after a delay while objects remain (a quarter of
//     the time the namespace has been terminating, between 1s and 1m), and
//     finalizes the namespace once nothing is left.
//
// Objects are listed and deleted with metadata clients (only object
// metadata crosses the wire). Per-cluster clients come from bounded caches
// (pkg/client/clusters) that share one http.Client; discovery results are
// not cached, since a pass is rare and must see CRDs created just before.
// Nothing is started per logical cluster.
//
// # Wiring
//
//	c, err := namespace.New(loopback, factory) // optional: namespace.WithWorkers(n)
//	// New asks factory (the shard's informers.SharedInformerFactory) for
//	// the wildcard Namespaces informer and registers its handler; start
//	// the factory after New.
//	factory.Start(ctx)
//	go c.Run(ctx)
//
// loopback is the shard's admin loopback config for its base URL
// (system:masters: it lists and deletes in every cluster; discovery of each
// cluster must include that cluster's CRDs, which the shard's per-cluster
// discovery handler provides). The Controller has Name() and Run(ctx) error,
// like the shard's other controllers. Run waits for the informer to sync
// and returns when ctx is done.
package namespace
