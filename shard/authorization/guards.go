package authorization

import (
	"fmt"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// publicPaths are the non-resource paths anyone may read, with their
// subpaths (/readyz/etcd): health checks of load balancers and process
// supervisors, and the version.
var publicPaths = []string{"/livez", "/readyz", "/healthz", "/version"}

// IsPublic tells whether a request reads a public path.
func IsPublic(attrs authorizer.Attributes) bool {
	if attrs.IsResourceRequest() || (attrs.GetVerb() != "get" && attrs.GetVerb() != "head") {
		return false
	}
	path := attrs.GetPath()
	for _, p := range publicPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// shardWidePaths are the non-resource paths, with their subpaths, that
// tell about the whole shard rather than a logical cluster: its metrics
// (other tenants' resources and request rates), profiles and flow-control
// dumps. RBAC of a logical cluster (a cluster-admin's nonResourceURLs *)
// cannot grant them.
var shardWidePaths = []string{"/metrics", "/debug"}

// IsShardWide tells whether a non-resource path is about the whole shard.
func IsShardWide(path string) bool {
	for _, p := range shardWidePaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// VirtualWorkspacePrefix prefixes the paths of the virtual workspaces the
// shard serves in-process. They authorize each request themselves.
const VirtualWorkspacePrefix = "/services/"

// kcpGroupPrefix prefixes the groups the system hands out per request
// (workspace access and admin); nobody but system:masters impersonates them.
const kcpGroupPrefix = "system:kcp:"

// IsVirtualWorkspace tells whether a request goes to one of the
// in-process virtual workspaces, initializing workspaces, apiexport,
// syncer or upsyncer (only at the shard's base URL, not under
// /clusters/<name>).
func IsVirtualWorkspace(cluster logicalcluster.Cluster, attrs authorizer.Attributes) bool {
	return !attrs.IsResourceRequest() && cluster.Name == logicalcluster.SystemAdmin &&
		(strings.HasPrefix(attrs.GetPath(), InitializingWorkspacesPrefix) || strings.HasPrefix(attrs.GetPath(), APIExportPrefix) ||
			strings.HasPrefix(attrs.GetPath(), SyncerPrefix) || strings.HasPrefix(attrs.GetPath(), UpsyncerPrefix))
}

// SyncerPrefix is the path of the syncer virtual workspace.
const SyncerPrefix = VirtualWorkspacePrefix + "syncer/"

// UpsyncerPrefix is the path of the upsyncer virtual workspace.
const UpsyncerPrefix = VirtualWorkspacePrefix + "upsyncer/"

// APIExportPrefix is the path of the apiexport virtual workspace.
const APIExportPrefix = VirtualWorkspacePrefix + "apiexport/"

// InitializingWorkspacesPrefix is the path of the initializing workspaces
// virtual workspace.
const InitializingWorkspacesPrefix = VirtualWorkspacePrefix + "initializingworkspaces/"

// guard refuses what no RBAC may grant to anyone but system:masters, and
// tells whether it refused.
func guard(cluster logicalcluster.Cluster, attrs authorizer.Attributes) (verdict, bool) {
	switch {
	case cluster.Wildcard:
		return deny(stageGuard, "requests across all logical clusters are only allowed for "+user.SystemPrivilegedGroup), true
	case cluster.Name.IsSystem():
		return deny(stageGuard, fmt.Sprintf("logical cluster %q is a system cluster, only accessible to %s", cluster, user.SystemPrivilegedGroup)), true
	}
	if !attrs.IsResourceRequest() {
		if IsShardWide(attrs.GetPath()) {
			return deny(stageGuard, fmt.Sprintf("%s is about the whole shard, only accessible to %s", attrs.GetPath(), user.SystemPrivilegedGroup)), true
		}
		return verdict{}, false
	}
	if reason := impersonationGuard(attrs); reason != "" {
		return deny(stageGuard, reason), true
	}
	if attrs.GetAPIGroup() == corev1alpha1.SchemeGroupVersion.Group && attrs.GetResource() == "logicalclusters" && !isRead(attrs.GetVerb()) {
		return deny(stageGuard, "only "+user.SystemPrivilegedGroup+" may change LogicalClusters"), true
	}
	return verdict{}, false
}

// impersonationGuard refuses impersonating what would carry a user out of
// its logical cluster: the system:masters group, and the user extras kcp's
// authentication sets (a service account's cluster). Whatever else a user
// may impersonate, RBAC in the cluster decides. It returns the reason of a
// refusal, or "".
func impersonationGuard(attrs authorizer.Attributes) string {
	verb := attrs.GetVerb()
	if verb != "impersonate" && !strings.HasPrefix(verb, "impersonate:") && !strings.HasPrefix(verb, "impersonate-on:") {
		return ""
	}
	// Upstream remembers associated-node decisions under a key without
	// the requestor's extras, and so without the scope that keeps other
	// decisions in their logical cluster; logical clusters have no nodes
	// for a service account to be associated with anyway.
	if verb == "impersonate:associated-node" || strings.HasPrefix(verb, "impersonate-on:associated-node:") {
		return "impersonating the node a service account runs on is not supported: logical clusters have no nodes"
	}
	switch attrs.GetResource() {
	case "groups":
		if attrs.GetName() == user.SystemPrivilegedGroup {
			return "impersonating the " + user.SystemPrivilegedGroup + " group is only allowed for " + user.SystemPrivilegedGroup
		}
		if strings.HasPrefix(attrs.GetName(), kcpGroupPrefix) || attrs.GetName() == "*" {
			return fmt.Sprintf("impersonating the group %q is only allowed for %s", attrs.GetName(), user.SystemPrivilegedGroup)
		}
	case "userextras":
		if sub := attrs.GetSubresource(); strings.HasPrefix(sub, kcpExtraPrefix) || sub == "*" {
			return fmt.Sprintf("impersonating the user extra %q is only allowed for %s", sub, user.SystemPrivilegedGroup)
		}
	}
	return ""
}

// isRead tells whether a resource verb only reads.
func isRead(verb string) bool {
	return verb == "get" || verb == "list" || verb == "watch"
}
