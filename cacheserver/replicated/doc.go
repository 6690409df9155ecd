// Package replicated holds the resources the cache server replicates and
// their storage.
//
// Every replicated resource has one store for all shards and logical
// clusters (one etcd3 storage per resource, and optionally one upstream
// watch cache per resource in front of it, which keys objects by their
// kcp.io/shard and kcp.io/cluster annotations and starts with a plain list
// so that same-named replicas are never merged): keys are
// /cache/<group>/<resource>/<shard>/<cluster>/<name> (shard/storage's
// resource prefix, "/<resource>" for the core group), and the shard and
// cluster of a request come from its context (WithScope). A request for
// shard "*" reads the resource's whole prefix, one for shard s and cluster
// "*" the prefix of s, and one for shard "*" and cluster c the whole prefix
// filtered by the objects' kcp.io/cluster annotation.
//
// Objects are stored schema-less, as unstructured JSON, and keep the
// metadata the owning shard wrote (uid, creationTimestamp, generation,
// labels, annotations, managedFields, finalizers, even a
// deletionTimestamp), except resourceVersion, which is the cache's own.
// Writes validate only the metadata (ValidateObjectMetaAccessor with path
// segment names), set the kcp.io/cluster and kcp.io/shard annotations from
// the request's scope and refuse objects whose annotations name another
// cluster or shard. A delete removes the object at once: finalizers of a
// replica are the owner's business, not the cache's.
package replicated
