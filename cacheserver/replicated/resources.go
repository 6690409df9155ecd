package replicated

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is a replicated resource. All are cluster-scoped.
type Resource struct {
	schema.GroupVersionResource
	Kind     string
	Singular string
	// Bound resources are served on the shards through root's APIExport
	// of their group, under its identity (SyncTargets and Locations): a
	// shard replicates them once that identity is known, and only the
	// objects of root's export.
	Bound bool
}

// GroupVersionKind of the resource's objects.
func (r Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion().WithKind(r.Kind)
}

// Resources returns the resources the cache server replicates, in a fixed
// order.
func Resources() []Resource {
	apis := schema.GroupVersion{Group: "apis.kcp.io", Version: "v1alpha1"}
	core := schema.GroupVersion{Group: "core.kcp.io", Version: "v1alpha1"}
	tenancy := schema.GroupVersion{Group: "tenancy.kcp.io", Version: "v1alpha1"}
	rbac := schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	workload := schema.GroupVersion{Group: "workload.kcp.io", Version: "v1alpha1"}
	scheduling := schema.GroupVersion{Group: "scheduling.kcp.io", Version: "v1alpha1"}
	return []Resource{
		{apis.WithResource("apiexports"), "APIExport", "apiexport", false},
		{apis.WithResource("apiresourceschemas"), "APIResourceSchema", "apiresourceschema", false},
		{apis.WithResource("apiexportendpointslices"), "APIExportEndpointSlice", "apiexportendpointslice", false},
		{core.WithResource("shards"), "Shard", "shard", false},
		{core.WithResource("logicalclusters"), "LogicalCluster", "logicalcluster", false},
		{tenancy.WithResource("workspacetypes"), "WorkspaceType", "workspacetype", false},
		{rbac.WithResource("clusterroles"), "ClusterRole", "clusterrole", false},
		{rbac.WithResource("clusterrolebindings"), "ClusterRoleBinding", "clusterrolebinding", false},
		// Placements of every shard choose among them.
		{workload.WithResource("synctargets"), "SyncTarget", "synctarget", true},
		{scheduling.WithResource("locations"), "Location", "location", true},
	}
}
