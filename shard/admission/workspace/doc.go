// Package workspace is the shard's workspace admission plugin, kcp's
// tenancy.kcp.io/Workspace and WorkspaceTypeExists plugins in one: it
// handles create and update of tenancy.kcp.io workspaces (not their
// subresources) and ignores everything else.
//
// On create of a Workspace in logical cluster P it (mutating phase)
//
//   - finds the type of P: the "<path>:<name>" in the
//     internal.tenancy.kcp.io/type annotation of P's LogicalCluster; root,
//     without the annotation, is of type root:root (which may exist as an
//     object or not). P without LogicalCluster is refused (403);
//   - defaults an empty spec.type to the defaultChildWorkspaceType of P's
//     type, else of the first type it extends (extend.with, transitively)
//     that has one, else root:universal;
//   - resolves spec.type: with a path, in the logical cluster of that path
//     (which must be known on this shard); without, in P and then in root,
//     and stores the canonical path where it was found (kcp.io/path of the
//     cluster). A type that does not exist is a 422 on spec.type;
//   - adds the additionalWorkspaceLabels of the type and of the types it
//     extends, leaving labels the request already sets;
//   - sets the owner annotation (experimental.tenancy.kcp.io/owner) to the
//     JSON of the requester's authentication/v1 UserInfo, replacing what the
//     client sent, unless the requester is in system:masters and the
//     annotation is set (the system creates home workspaces for users).
//
// and then (validating phase) refuses with 403
//
//   - workspaces in system:* logical clusters;
//   - spec.cluster or spec.URL set by anyone but system:masters;
//   - system annotations set by anyone but system:masters: the scheduling
//     decision of the workspace controller (internal.tenancy.kcp.io/cluster
//     and core.kcp.io/shard), which it trusts, and every annotation of an
//     internal kcp.io domain (internal.kcp.io, internal.<x>.kcp.io,
//     <x>.internal.kcp.io);
//   - an owner annotation that is not the requester (except for masters);
//   - a type the requester may not "use": verb use on resource
//     workspacetypes of group tenancy.kcp.io named like the type, asked of
//     the shard's authorizer in the type's logical cluster, for the type
//     and for every type it extends (transitively), each in its own
//     logical cluster (system:masters may use every type);
//   - a type whose limitAllowedParents, or whose parent type's
//     limitAllowedChildren, excludes the other. A type matches a selector
//     when it or a type it extends is listed; none: true allows nothing.
//     References without path in a type's spec are relative to the type's
//     own logical cluster.
//
// On update it refuses a change of spec.type (422), and from anyone but
// system:masters a change of spec.cluster, spec.URL, the owner annotation
// or a system annotation: setting, changing or removing it (403). Leaving a
// system annotation as it is is fine.
//
// A reference without path (spec.type, or in a type's spec) is looked up
// in the cluster it is relative to and then in root only; kcp walks every
// ancestor, which would need reads across shards.
//
// # Wiring
//
//	plugin := workspace.New(workspace.NewConfig(
//		factory.LogicalClusters(),
//		factory.WorkspaceTypes(),
//		s.resolvePath, // shard/server: path -> local logical cluster
//		authz,         // the shard's authorizer chain
//	))
//
// Call it before the factory is started, check plugin.ValidateInitialization,
// and add plugin to the shard's admission chain. Until both informers have
// synced, workspace creation waits up to 10 seconds and is then refused as
// not yet ready.
package workspace
