// Package replication copies to the cache server what every shard of an
// installation must see of this shard: APIExports, APIResourceSchemas,
// APIExportEndpointSlices, Shards, WorkspaceTypes, LogicalClusters (their
// name, uid, owner, deletion and the annotations that place them: path,
// shard, type, required groups; not their phase, which changes often), and the ClusterRoles and ClusterRoleBindings
// that authorize bind, use and maximal permission policies.
//
// One controller per shard, one work queue per resource: the shard's own
// wildcard informers are compared with wildcard informers of the shard's
// replicas in the cache (/services/cache/shards/<shard>/clusters/*), and
// every difference becomes a create, update or delete in the cache. Both
// sides enqueue, so a restart or a cache outage converges when the
// informers have listed again: replicas of deleted objects are deleted and
// nothing is created twice (a create that finds a replica updates it).
//
// A replica is the local object without its resourceVersion and
// managedFields, with kcp.io/path set to the canonical path of its logical
// cluster (when known) so that other shards find it by path, as kcp's
// replicas are. The system logical clusters (system:*) are the shard's own
// and are never replicated.
//
// Which RBAC is replicated: a ClusterRole whose rules grant a verb on
// apiexports or apiexports/content (apis.kcp.io) or on workspacetypes
// (tenancy.kcp.io), and every ClusterRole bound by a ClusterRoleBinding
// that grants something to a maximal permission policy user
// (apis.kcp.io:binding:*); a ClusterRoleBinding that binds a replicated
// ClusterRole of its logical cluster.
package replication
