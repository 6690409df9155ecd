// Package compute runs kcp's transparent multi-cluster scheduling on a
// shard: the controllers of SyncTargets, Locations, Placements and the
// namespaces Placements select, as kcp's TMC controllers behave. SyncTargets,
// Locations and Placements are bound resources (root's APIExports
// workload.kcp.io and scheduling.kcp.io); the controllers see them through
// wildcard informers of <resource>:<identity>, built once the exports'
// identities are known (root creates the exports shortly after start; other
// shards see them in the cache server).
//
// # SyncTargets
//
// Every SyncTarget gets the label internal.workload.kcp.io/key, its key
// (workloadv1alpha1.ToSyncTargetKey), and in its status the URLs of the
// syncer and upsyncer virtual workspaces of every shard:
// <shard virtual workspace URL>/services/(up)syncer/<cluster>/<name>/<uid>.
// HeartbeatHealthy is True while status.lastSyncerHeartbeatTime is less than
// the heartbeat threshold (one minute, as kcp) old, and False with reason
// ErrorHeartbeat otherwise; Ready is True when every other condition is
// True, and False with the reason of the first that is not.
//
// # Locations
//
// A Location's instances are the SyncTargets of its own logical cluster that
// its instanceSelector selects (none without one); the available ones are
// Ready, schedulable and not past their evictAfter. status.instances and
// status.availableInstances count them, and the annotation
// scheduling.kcp.io/labels shows the Location's labels.
//
// # Placements
//
// A Placement looks for Locations of its locationResource in its
// locationWorkspace (its own workspace when empty) that one of its
// locationSelectors selects. Without one it is Pending, Ready False
// (LocationNoMatch, or LocationNotFound when the workspace is unknown);
// with one it keeps a valid selected Location or picks one at random, and
// is Unbound, or Bound while a namespace it selects carries the annotation
// scheduling.kcp.io/placement. A Bound Placement keeps its Location; when
// that Location stops matching it turns Ready False (LocationInvalid).
// Then it picks one SyncTarget of the selected Location that is available
// and supports the APIs of the workspace's compute bindings (bindings with
// the annotation extra.apis.kcp.io/compute.workload.kcp.io; supported
// means listed as Accepted, with the same identity, in the SyncTarget's
// status.syncedResources), keeps it while it stays so, and records its key
// in the annotation internal.workload.kcp.io/synctarget; Scheduled says why
// there is none.
//
// # Namespaces
//
// A namespace that a Placement (not Pending, not Ready False) selects by
// its namespaceSelector (none without one) gets the annotation
// scheduling.kcp.io/placement, and the label state.workload.kcp.io/<key>
// with the value Sync for the SyncTarget of each such Placement. A key no
// Placement schedules any more gets deletion.internal.workload.kcp.io/<key>
// with the time (RFC 3339); five seconds later the label and the annotation
// go, as in kcp.
//
// # Defaults
//
// A workspace with SyncTargets gets the Location "default" of all of them
// while it has none of that name, as kcp's. A bound compute binding without
// the annotation workload.kcp.io/skip-default-object-creation gets its
// workspace the Placement "default" (all namespaces, any Location of the
// export's workspace) once the workspace serves Placements, and then the
// annotation, so that a deleted default Placement stays deleted; `kubectl
// kcp bind compute` creates its bindings with the annotation.
//
// # Objects
//
// The synced objects of a placed namespace (ConfigMaps, Secrets and the
// resources of the workspace's compute bindings) follow its state labels
// and deletion annotations (ApplyNamespaceState): in admission when they
// are written (package resourcestate), and by a sweep of the namespace's
// objects when its placement changes. A key the namespace drops stays on
// an object while a syncer finalizer (workload.kcp.io/syncer-<key>) or a
// finalizers.workload.kcp.io/<key> annotation holds it, marked with a
// deletion time, so that the syncer removes the downstream copy first.
//
// # Volumes
//
// PersistentVolumes upsynced from a SyncTarget switch to Sync once their
// claim is bound to them, then follow their claim to other SyncTargets,
// and are released by one SyncTarget when the claim is deleted
// (volumes.go).
//
// Nothing is started per logical cluster, object or SyncTarget: eight
// controllers and three informers per shard, plus the informers of volumes
// and claims per compute export that workspaces bind, whatever the number
// of workspaces, and only once a workspace of the shard binds root's
// workload.kcp.io or scheduling.kcp.io (before, about 120 goroutines and
// three custom resource watch caches would idle for nothing).
package compute
