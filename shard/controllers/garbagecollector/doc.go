// Package garbagecollector holds the shard's garbage collector: Kubernetes
// garbage collection by ownerReferences, within each logical cluster
// (owners and dependents are always in the same cluster), for all logical
// clusters of a shard at once.
//
//   - Background: once an owner is gone, a dependent whose every owner is
//     gone is deleted (an owner reference only counts if the UID matches);
//     a dependent that still has other owners loses its references to the
//     ones that are gone.
//   - Orphan: an owner being deleted with the "orphan" finalizer has its
//     owner references removed from its dependents, then the finalizer
//     removed.
//   - Foreground: the dependents of an owner being deleted with the
//     "foregroundDeletion" finalizer are deleted (themselves in the
//     foreground when they have dependents of their own); once no dependent
//     with blockOwnerDeletion is left, the finalizer is removed.
//
// # Design
//
// Upstream's garbage collector keeps a graph of every object of every
// resource, fed by one metadata informer per resource, and is
// single-cluster. Here one instance serves every logical cluster of a
// shard, and its cost grows with the number of objects and of distinct
// resources, never with the number of logical clusters:
//
//   - Monitors: one wildcard metadata informer (/clusters/*, keyed
//     cluster|namespace/name, package informers) per monitored group
//     resource. The built-in resources are discovered once at start at
//     /clusters/* (every cluster serves the same ones): those that can be
//     listed, watched and deleted, except events. Custom resources are
//     added from the shard's wildcard CRD informer: one monitor per CRD
//     name (<plural>.<group>) while any logical cluster has an Established
//     CRD of that name, however many clusters do; it is stopped when the
//     last one goes.
//   - Graph: instead of a graph, two indexes on every monitor: by
//     cluster|uid and by cluster|owner-uid. "Who are the dependents of X"
//     and "is X cached" are one index lookup per monitor.
//   - Memory: the informers store trimmed metadata (name, namespace, uid,
//     resourceVersion, deletionTimestamp, finalizers, ownerReferences and
//     the kcp.io/cluster annotation), a few hundred bytes per object, not
//     the objects; labels, other annotations and managed fields are dropped.
//   - Queue: one shared reconcile loop (pkg/reconciler) keyed by the UID of
//     an owner in a logical cluster (Key{Cluster, Name: uid}). Events map
//     to owner keys: an object with owner references enqueues its owners
//     when added, when its references change and when deleted; an object
//     being deleted with a GC finalizer, and any deleted object, enqueue
//     themselves. Status updates and other changes enqueue nothing.
//   - Safety: the cache is never trusted to say an owner is gone. An owner
//     that the monitors do not have is read from the API server, its kind
//     resolved with the built-in kinds and the CRDs of its logical cluster
//     (from the cache, then the API server); it is gone if that read finds
//     nothing or another UID, or if the cluster serves no such kind. A
//     dependent is read from the API server before it is deleted or
//     patched, and deleted with a UID precondition. Writes are JSON merge
//     patches carrying uid and resourceVersion, so a write computed from
//     stale state fails with a conflict and is retried.
//
// # Trade-offs
//
//   - The monitors duplicate, in trimmed form, what other informers of the
//     shard hold: the shared informer factory only offers full objects and
//     cannot stop an informer whose CRD went away, so the collector runs
//     its own informers over metadata.
//   - Every distinct custom resource served in any logical cluster costs a
//     watch and an informer, shared by all clusters that serve it. If
//     clusters serve the same CRD name in different versions, the monitor
//     uses one version (kept while any Established CRD serves it, else the
//     storage version of the first cluster's CRD); objects of clusters
//     whose CRD does not serve it are not listed by that monitor.
//   - Resources that cannot be watched are not monitored: their objects are
//     never collected as dependents, but they are resolved as owners.
//   - Built-in resources are discovered once; a restart picks up new ones.
//     If discovery stays incomplete after a few attempts, the collector
//     starts with what it found.
//   - Lookups scan every monitor (tens of index reads per event), which is
//     cheaper than keeping a graph of every object per cluster in memory.
//   - An owner of a kind that its cluster no longer serves (its CRD was
//     deleted) counts as gone, so its dependents are collected; upstream
//     retries those forever.
//
// # Wiring
//
//	gc, err := garbagecollector.New(loopback, factory) // optional: garbagecollector.WithWorkers(n)
//	// New asks factory (the shard's informers.SharedInformerFactory) for
//	// the wildcard CRD informer and adds an index to it; start the factory
//	// after New.
//	factory.Start(ctx)
//	go gc.Run(ctx)
//
// loopback is the shard's admin loopback config for its base URL
// (system:masters: it lists and watches at /clusters/* and writes in every
// cluster). The Controller has Name() and Run(ctx) error, like the shard's
// other controllers. Run needs discovery and metadata
// (as=PartialObjectMetadata) list and watch at /clusters/*; it retries
// discovery until the shard answers (so it may start before the shard
// serves), runs its own metadata informers (they are not in factory),
// waits for the built-in ones to sync before collecting, and returns when
// ctx is done.
package garbagecollector
