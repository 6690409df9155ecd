package replicated

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is a replicated resource. All are cluster-scoped.
type Resource struct {
	schema.GroupVersionResource
	Kind     string
	Singular string
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
	return []Resource{
		{apis.WithResource("apiexports"), "APIExport", "apiexport"},
		{apis.WithResource("apiresourceschemas"), "APIResourceSchema", "apiresourceschema"},
		{apis.WithResource("apiexportendpointslices"), "APIExportEndpointSlice", "apiexportendpointslice"},
		{core.WithResource("shards"), "Shard", "shard"},
		{core.WithResource("logicalclusters"), "LogicalCluster", "logicalcluster"},
		{tenancy.WithResource("workspacetypes"), "WorkspaceType", "workspacetype"},
		{rbac.WithResource("clusterroles"), "ClusterRole", "clusterrole"},
		{rbac.WithResource("clusterrolebindings"), "ClusterRoleBinding", "clusterrolebinding"},
	}
}
