// Package syncer serves the syncer virtual workspace of a shard,
// kcp-compatible:
//
//	/services/syncer/<cluster>/<synctarget>/<uid>/clusters/*/api/v1/configmaps
//	/services/syncer/<cluster>/<synctarget>/<uid>/clusters/<c>/apis/<group>/<version>/namespaces/<ns>/<resource>/<name>[/status]
//
// It is a syncer's view of the workspaces scheduled to its SyncTarget (the
// SyncTarget <synctarget> of logical cluster <cluster>, whose UID must be
// <uid>): exactly the objects of the SyncTarget's synced resources
// (status.syncedResources, Accepted) that carry the label
// state.workload.kcp.io/<key>=Sync, where <key> is the SyncTarget's key. A
// deletion.internal.workload.kcp.io/<key> annotation is shown as the
// object's metadata.deletionTimestamp, so that the syncer starts the
// downstream deletion when the object is removed from its SyncTarget, as
// when it is deleted.
//
// Lists and watches (across all clusters or in one) are forwarded to the
// shard with the state label added to the label selector and the resource
// qualified by the identity the SyncTarget reports for it. Gets, and
// writes of the status (update or patch) or of the object's finalizers (an
// update changes nothing else: the syncer adds and removes its finalizer
// workload.kcp.io/syncer-<key>), are forwarded only for an object that
// carries the label. Creates, deletes and patches of the object are
// refused: the syncer does not make, remove or change upstream objects.
// Discovery is not served; a syncer knows its resources from the
// SyncTarget's status.syncedResources.
//
// Requests are authorized by the verb "sync" on the SyncTarget
// (workload.kcp.io, synctargets, named <synctarget>) in its logical
// cluster, which `kubectl kcp workload sync` grants the syncer's service
// account. Objects are exchanged as JSON. The package talks to the shard
// only over HTTP with the shard admin's configuration, so it runs in the
// shard and in tessera-virtual-workspaces alike, and starts nothing.
package syncer
