// Package initializingworkspaces serves the initializing workspaces virtual
// workspace of a shard, kcp-compatible:
//
//	/services/initializingworkspaces/<initializer>/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters
//	/services/initializingworkspaces/<initializer>/clusters/<name>/...
//
// The controller that owns a WorkspaceType with spec.initializer lists and
// watches the LogicalClusters of the shard that still wait for the type's
// initializer ("<cluster of the type>:<type name>"), sets up the content of
// each one through its /clusters/<name> endpoint while it is initializing,
// and finally removes its initializer from status.initializers. When none
// is left the shard makes the logical cluster Ready, and the virtual
// workspace no longer shows or serves it.
//
// Everything is forwarded to the shard itself over its loopback
// configuration. Lists and watches go as one wildcard request with the
// initializer's label added to the label selector. Status writes go only
// when all they change is the removal of the initializer from
// status.initializers (and the phase Ready that follows from it).
// Requests for the content of a logical cluster (resource requests under
// /api and /apis other than of LogicalClusters, and reads of discovery,
// /openapi and /version) impersonate the user
// system:kcp:initializer:<initializer> in the groups
// system:kcp:clusterworkspace:admin and system:authenticated, which the
// shard lets into logical clusters that are not Ready and makes
// cluster-admin there; its rules for everyone but system:masters hold. The
// path sent to the shard is rebuilt from the checked segments of the
// request's path: segments holding '/', '\', '%' or control characters,
// escaped or not, and dot or empty segments are refused. Nothing is
// started per logical cluster or per initializer.
//
// The handler expects authenticated requests (the user in the request
// context) and authorizes them itself: the user must be allowed the verb
// "initialize" on the WorkspaceType of the initializer, in the type's
// logical cluster; system initializers are for system:masters only. In a
// shard it belongs after authentication, dispatched by PathPrefix ahead of
// the logical cluster guard, with IsLongRunning added to the shard's
// LongRunningFunc so that watches are not cut by the request timeout.
package initializingworkspaces
