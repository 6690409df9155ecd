package informers

import (
	"fmt"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// Workspaces returns the informer of tenancy.kcp.io/v1alpha1 workspaces.
func (f *SharedInformerFactory) Workspaces() Informer[*tenancyv1alpha1.Workspace] {
	return typedInformer(f, tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaces"), tenancyv1alpha1.Resource("workspace"), &tenancyv1alpha1.Workspace{},
		func() listWatcher[*tenancyv1alpha1.WorkspaceList] { return f.kcp("workspaces").Workspaces() })
}

// WorkspaceTypes returns the informer of tenancy.kcp.io/v1alpha1
// workspacetypes.
func (f *SharedInformerFactory) WorkspaceTypes() Informer[*tenancyv1alpha1.WorkspaceType] {
	return typedInformer(f, tenancyv1alpha1.SchemeGroupVersion.WithResource("workspacetypes"), tenancyv1alpha1.Resource("workspacetype"), &tenancyv1alpha1.WorkspaceType{},
		func() listWatcher[*tenancyv1alpha1.WorkspaceTypeList] {
			return f.kcp("workspacetypes").WorkspaceTypes()
		})
}

// Shards returns the informer of core.kcp.io/v1alpha1 shards.
func (f *SharedInformerFactory) Shards() Informer[*corev1alpha1.Shard] {
	return typedInformer(f, corev1alpha1.SchemeGroupVersion.WithResource("shards"), corev1alpha1.Resource("shard"), &corev1alpha1.Shard{},
		func() listWatcher[*corev1alpha1.ShardList] { return f.kcp("shards").Shards() })
}

// APIResourceSchemas returns the informer of apis.kcp.io/v1alpha1
// apiresourceschemas.
func (f *SharedInformerFactory) APIResourceSchemas() Informer[*apisv1alpha1.APIResourceSchema] {
	return typedInformer(f, apisv1alpha1.SchemeGroupVersion.WithResource("apiresourceschemas"), apisv1alpha1.Resource("apiresourceschema"), &apisv1alpha1.APIResourceSchema{},
		func() listWatcher[*apisv1alpha1.APIResourceSchemaList] {
			return f.kcp("apiresourceschemas").APIResourceSchemas()
		})
}

// APIExports returns the informer of apis.kcp.io/v1alpha1 apiexports.
func (f *SharedInformerFactory) APIExports() Informer[*apisv1alpha1.APIExport] {
	return typedInformer(f, apisv1alpha1.SchemeGroupVersion.WithResource("apiexports"), apisv1alpha1.Resource("apiexport"), &apisv1alpha1.APIExport{},
		func() listWatcher[*apisv1alpha1.APIExportList] { return f.kcp("apiexports").APIExports() })
}

// APIBindings returns the informer of apis.kcp.io/v1alpha1 apibindings.
func (f *SharedInformerFactory) APIBindings() Informer[*apisv1alpha1.APIBinding] {
	return typedInformer(f, apisv1alpha1.SchemeGroupVersion.WithResource("apibindings"), apisv1alpha1.Resource("apibinding"), &apisv1alpha1.APIBinding{},
		func() listWatcher[*apisv1alpha1.APIBindingList] { return f.kcp("apibindings").APIBindings() })
}

// APIExportEndpointSlices returns the informer of apis.kcp.io/v1alpha1
// apiexportendpointslices.
func (f *SharedInformerFactory) APIExportEndpointSlices() Informer[*apisv1alpha1.APIExportEndpointSlice] {
	return typedInformer(f, apisv1alpha1.SchemeGroupVersion.WithResource("apiexportendpointslices"), apisv1alpha1.Resource("apiexportendpointslice"), &apisv1alpha1.APIExportEndpointSlice{},
		func() listWatcher[*apisv1alpha1.APIExportEndpointSliceList] {
			return f.kcp("apiexportendpointslices").APIExportEndpointSlices()
		})
}

// Partitions returns the informer of topology.kcp.io/v1alpha1 partitions.
func (f *SharedInformerFactory) Partitions() Informer[*topologyv1alpha1.Partition] {
	return typedInformer(f, topologyv1alpha1.SchemeGroupVersion.WithResource("partitions"), topologyv1alpha1.Resource("partition"), &topologyv1alpha1.Partition{},
		func() listWatcher[*topologyv1alpha1.PartitionList] { return f.kcp("partitions").Partitions() })
}

// PartitionSets returns the informer of topology.kcp.io/v1alpha1
// partitionsets.
func (f *SharedInformerFactory) PartitionSets() Informer[*topologyv1alpha1.PartitionSet] {
	return typedInformer(f, topologyv1alpha1.SchemeGroupVersion.WithResource("partitionsets"), topologyv1alpha1.Resource("partitionset"), &topologyv1alpha1.PartitionSet{},
		func() listWatcher[*topologyv1alpha1.PartitionSetList] { return f.kcp("partitionsets").PartitionSets() })
}

func (f *SharedInformerFactory) kcp(resource string) *kcpclient.Clientset {
	if f.clients.KCP == nil {
		panic(fmt.Sprintf("informers: Clients.KCP is required for %s", resource))
	}
	return f.clients.KCP
}

// LogicalClusters returns the informer of core.kcp.io/v1alpha1
// logicalclusters.
func (f *SharedInformerFactory) LogicalClusters() Informer[*corev1alpha1.LogicalCluster] {
	return typedInformer(f, corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters"), corev1alpha1.Resource("logicalcluster"), &corev1alpha1.LogicalCluster{},
		func() listWatcher[*corev1alpha1.LogicalClusterList] {
			return f.kcp("logicalclusters").LogicalClusters()
		})
}
