// Package workspacetype maintains the status of the WorkspaceTypes of a
// shard: status.virtualWorkspaces lists, for every Shard of the
// installation, the URL of the initializing-workspaces virtual workspace of
// the type's initializer on that shard,
//
//	<shard virtualWorkspaceURL or baseURL>/services/initializingworkspaces/<cluster of the type>:<type name>
//
// sorted, and the condition Ready is True (False with reason NoShards while
// no Shard exists). The URLs are listed for every type, with or without
// spec.initializer, as kcp does. All types are reconciled again when Shards
// of root change; events of Shards in other logical clusters are ignored.
//
// # Wiring in the shard
//
// New must run before the informer factory starts: it adds the factory's
// WorkspaceTypes informer and, unless Config.Shards is given, its Shards
// informer (Shards are read from root; on shards that do not host root,
// pass an informer that has them, e.g. of the cache server). It writes
// through Config.Loopback, the shard's admin config:
//
//	wt, err := workspacetype.New(workspacetype.Config{Informers: s.Informers, Loopback: s.Generic.LoopbackClientConfig})
//
// *Controller has Name and Run(ctx) error.
package workspacetype
