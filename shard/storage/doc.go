// Package storage makes upstream registry storage serve every logical cluster
// of a shard from one store per resource.
//
// The layers, from the registry down to etcd:
//
//  1. scoped: rewrites the key the registry computed ("<prefix>/<ns>/<name>")
//     into "<prefix>/<cluster>/<ns>/<name>", taking the cluster from the
//     request context; a wildcard request lists or watches the bare prefix.
//  2. the upstream watch cache (optional), one per resource for all clusters,
//     keyed by the same cluster-aware keys, read from the object's
//     kcp.io/cluster annotation.
//  3. annotating: stamps kcp.io/cluster from the etcd key on every write, so
//     clients can neither forge nor remove it, and tells the watch cache not
//     to use watch-list semantics (its initial-sync store keys by
//     namespace/name and would merge same-named objects of different clusters).
//  4. the etcd3 storage.
package storage
