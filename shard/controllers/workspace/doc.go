// Package workspace schedules the Workspaces of a shard onto shards,
// follows their logical clusters until they are Ready, and deletes the
// logical cluster of a deleted Workspace. One controller serves all logical
// clusters of the shard through wildcard informers.
//
// # Scheduling
//
// A Workspace W in a parent logical cluster P with an empty spec.cluster
// gets the finalizer core.kcp.io/logicalcluster and a choice: a random
// logical cluster name (16 characters of [a-z0-9]) and the shard that name
// maps to by rendezvous hashing among the Shards of root that match
// spec.location.selector. The choice is stored in the annotations
// internal.tenancy.kcp.io/cluster and core.kcp.io/shard in the same update,
// before anything is created, so that a reconcile after a crash adopts what
// an earlier one created. Only a name in that generated format is taken
// from the annotation (never root, a system:* name or a path); anything
// else is logged and replaced by a fresh choice. Admission refuses users
// setting either annotation. Then the LogicalCluster "cluster" of the new
// logical cluster is created on the chosen shard, through the shard's
// baseURL (Config.ShardConfig), also when it is this shard. Its annotations
// carry the canonical path (P's kcp.io/path joined with W's name), the type
// ("<path>:<name>"), the shard, W's owner annotation and P's required
// groups (P's LogicalCluster is read from the server for this, not from a
// cache, so that a change just made is inherited); spec.owner points at
// W; spec.initializers are system:owner (if W has an owner) and the
// initializers of W's type and of every type it extends. If the name is
// taken by another owner, another name (and shard) is tried; a
// LogicalCluster owned by W is adopted. Finally spec.cluster and spec.URL
// (<shard externalURL>/clusters/<canonical path>) are set, and the status
// mirrors the LogicalCluster with WorkspaceScheduled True. No matching
// shard or a missing type sets WorkspaceScheduled False with reason
// Unschedulable and retries after 10s (and on events of Shards of root;
// Shards in other logical clusters are ignored).
//
// # Following
//
// A scheduled Workspace mirrors status.phase, status.initializers and the
// condition WorkspaceInitialized of its LogicalCluster into its status
// (the registry keeps the label tenancy.kcp.io/phase in step). The
// LogicalCluster of another shard is read with a GET from its shard; until
// it is Ready it is read again with exponential backoff (100ms doubling to
// 10s, reset on progress); no other shard is watched. The LogicalCluster
// of this shard is read from the local LogicalCluster informer, whose
// events enqueue the owning Workspace at once, without a request; with a
// GET from the shard only when the informer does not show it owned by the
// Workspace, or shows a copy older than one the controller got from the
// server (a create or a GET; the status never goes back). Once Ready, a
// Workspace reads its LogicalCluster again only when it lives on this
// shard and the informer shows a change, so that a restart does not read
// every logical cluster anew. A LogicalCluster that disappears takes its
// Workspace with it (see LogicalClusterSpec.Owner), but only on the word
// of its shard: a NotFound status of the API server about that
// LogicalCluster; a LogicalCluster missing from the informer (which may
// lag behind its create) is read from the shard. A missing Shard
// object, an unreachable shard, or a 404 that is not such a status (a
// wrong baseURL, a proxy) keep the phase and set WorkspaceScheduled False
// with reason Unavailable (written once), and the Workspace is retried
// with backoff up to 2m, or at once on an event of its Shard.
//
// # Writes
//
// A reconcile that writes a Workspace several times is queued again by the
// events of its first writes and often starts again before the informer
// shows its last one. A reconcile whose cached Workspace is older than the
// controller's own last write (or read) of it does nothing but wait for
// the event of that write, which queues it again: a write based on the old
// copy could only conflict and cost a read. The resourceVersions this
// needs are kept only until the cache has caught up, at most a minute
// (see versions), so that nothing is kept per Workspace.
//
// # Unreachable shards
//
// Every shard has a circuit breaker. Requests to a shard connect within
// 5s and finish within 15s; once one could not reach the shard (a
// connection error or a timeout), requests to that shard fail at once for
// a cool-down (2s, doubling up to 1m), then one request at a time probes
// it; any answer of the shard closes the breaker. So a shard that is down
// holds at most one worker, and the Workspaces of other shards go on. The
// state is a few words per Shard and goes with the Shard.
//
// # Deletion
//
// When W is deleted, its LogicalCluster (if it exists and is owned by W) is
// deleted on its shard, which deletes the content of the logical cluster,
// and W shows phase Deleting; the LogicalCluster is polled with backoff
// (and local LogicalCluster events) until it is gone, and then the
// finalizer is removed from W. The finalizer is removed only when the
// shard answers that the LogicalCluster does not exist (as above) or that
// it belongs to another owner, which is never deleted: while the Shard
// object is missing or the shard cannot be reached, W keeps its finalizer
// and shows WorkspaceScheduled False with reason Unavailable, so that the
// logical cluster and its content are not orphaned. (An administrator who
// knows the shard is gone for good removes the finalizer by hand.) A
// Workspace deleted before a logical cluster name was chosen only loses
// its finalizer.
//
// # Wiring in the shard
//
// New must run before the informer factory starts: it adds the factory's
// Workspaces informer, its informer of core.kcp.io/v1alpha1
// logicalclusters and, unless Config.Shards is given, its Shards informer.
// On a shard that does not host root, Shards must come from somewhere that
// has root's Shard objects (the cache server). For example, in
// shard/server/controllers.go:
//
//	ws, err := workspace.New(workspace.Config{
//		Informers:   s.Informers,
//		ShardName:   shardName,
//		ShardConfig: func(sh *corev1alpha1.Shard) (*rest.Config, error) { ... Host: sh.Spec.BaseURL, system:masters credentials ... },
//		Loopback:    s.Generic.LoopbackClientConfig,
//		TypeLookup:  lookupWorkspaceType,
//	})
//
// *Controller has Name and Run(ctx) error.
package workspace
