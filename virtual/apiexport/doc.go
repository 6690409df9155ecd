// Package apiexport serves the apiexport virtual workspace of a shard,
// kcp-compatible:
//
//	/services/apiexport/<export workspace>/<export name>/clusters/*/apis/<group>/<version>/<resource>
//	/services/apiexport/<export workspace>/<export name>/clusters/<consumer>/apis/<group>/<version>/...
//
// It is the provider's view of its export: its discovery lists the
// resources of the export's latest APIResourceSchemas, a list or watch at
// /clusters/* returns the objects of every logical cluster on the shard
// that binds the export (and an empty list while none does), and requests
// at /clusters/<consumer> read and write the objects of one consumer (any
// verb), provided it binds the export. The export's workspace is given by
// path (root:org:ws) or logical cluster name. The consumers' APIBindings
// of the export are served too, read-only (bindings.go).
//
// Requests are authorized by the verb they ask for on the subresource
// "content" of the APIExport (apis.kcp.io, apiexports/content, named after
// the export) in the export's logical cluster, as kcp does; discovery
// needs get, list or watch there. Allowed requests are forwarded to the
// shard with the shard admin's client, with the resource qualified by the
// export's identity (<resource>:<identityHash>), so the shard serves
// exactly the objects stored under that identity, whatever the cluster:
// a consumer that binds another export of the same group/resource is not
// reachable, and nothing but the exported resources is. The path sent to
// the shard is rebuilt from checked segments (virtual/forward).
//
// The package talks to the shard only through its configuration and
// informers (exports and schemas), so the same handler can run in
// tessera-virtual-workspaces. Nothing is started per export or consumer.
package apiexport
