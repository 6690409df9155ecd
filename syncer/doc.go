// Package syncer is tessera-syncer: it syncs the objects that workspaces
// schedule to one SyncTarget onto one physical cluster, and their status
// back, the way kcp's syncer does, so that kcp's manifests and conventions
// work unchanged.
//
// # Upstream and downstream
//
// Upstream, the syncer reads the syncer virtual workspace of every shard
// (the SyncTarget's status.virtualWorkspaces), which shows exactly the
// objects in Sync state for the SyncTarget, across workspaces, and takes
// only the syncer's finalizer and status writes (virtual/syncer). It
// authenticates as the SyncTarget's service account (--from-kubeconfig,
// written by kubectl kcp workload sync). Downstream, an object of upstream
// namespace <ns> of workspace <cluster> lives in the physical cluster's
// namespace kcp-<12 base-36 digits of the SHA-224 of the namespace
// locator>, whose kcp.io/namespace-locator annotation holds that locator
// (SyncTarget, cluster, namespace) as JSON, as kcp names and marks it.
// Downstream namespaces and objects carry the label
// internal.workload.kcp.io/cluster=<SyncTarget key>; the syncer lists and
// watches nothing else there.
//
// # Engines
//
// The SyncTarget's status.syncedResources decide what is synced. The
// shard lists there the built-in ConfigMaps and Secrets and the resources
// of the SyncTarget's supported APIExports, Pending; the syncer compares
// them with the physical cluster's discovery and reports each Accepted (it
// serves one of the versions) or Incompatible, then runs one engine per
// Accepted resource: a wildcard informer per shard upstream, a filtered
// informer downstream and a work queue of upstream keys
// (cluster|namespace/name), which downstream events reach through their
// namespace's locator. Nothing is started per workspace or per object.
//
// An engine's reconcile of one key:
//   - the object is applied downstream (server-side apply, field manager
//     tessera-syncer) without status, identity, owners, finalizers and the
//     placement labels and annotations; the hash of what was applied is
//     kept in the annotation syncer.tessera.dev/applied, so an unchanged
//     object costs no request;
//   - the syncer's finalizer workload.kcp.io/syncer-<key> is put on the
//     upstream object right after the first apply, so that it cannot go
//     without the syncer noticing (one that goes before leaves a copy
//     without a source, which is deleted as such);
//   - the downstream status is written upstream when it differs;
//   - an upstream object being deleted, or shown deleted because its
//     namespace left the SyncTarget, has its downstream copy deleted and
//     then its finalizer removed; a downstream object whose upstream object
//     is gone is deleted. Once both sides are listed at start, every
//     downstream object is looked at, so a syncer restarted after changes
//     on either side creates what is missing, deletes what has no source
//     and duplicates nothing (names are deterministic and applies
//     idempotent).
//
// A downstream namespace without synced objects is deleted after
// --downstream-namespace-clean-delay.
//
// The syncer also sets the SyncTarget's status.lastSyncerHeartbeatTime
// every --heartbeat-interval (the shard marks it not Ready when heartbeats
// stop) and exits when the SyncTarget's UID is not --sync-target-uid.
//
// With --resources, the syncer imports custom resources of the physical
// cluster (CRDs named <plural>.<group>) into the SyncTarget's workspace:
// an APIResourceSchema each, listed in the workspace's APIExport
// kubernetes, which the SyncTarget then supports (importer.go).
//
// PersistentVolumes go the other way (upsync.go, kcp's storage design): a
// volume the physical cluster makes for a synced claim is copied, bound to
// the workspace's claim, into the claim's workspace through the upsyncer
// virtual workspace, and deleted there when it goes.
//
// Once the shard's volume coordination has switched such a volume to
// Sync, it goes down with its claim to every SyncTarget the claim goes to,
// Retain everywhere but on the one SyncTarget that releases it after its
// claim is deleted (volumes.go).
//
// Not done yet: importing built-in
// resources, kcp's Deployment mutations (service account token and DNS in
// the physical cluster), spec-diff and status annotations for advanced
// scheduling, and upsync through more than one shard.
package syncer
