package apischema

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
)

// Core returns the resources kcp publishes from the root workspace, with
// kcp's names, scopes, subresources and printer columns: workspaces and
// workspacetypes (APIExport tenancy.kcp.io), partitions and partitionsets
// (topology.kcp.io) and shards (shards.core.kcp.io).
func Core() []Resource {
	age := apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}
	kcp := []string{"kcp"}
	return []Resource{
		{
			Model:   tenancyv1alpha1.Workspace{}.OpenAPIModelName(),
			Group:   tenancyv1alpha1.SchemeGroupVersion.Group,
			Version: tenancyv1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "workspaces", Singular: "workspace", Kind: "Workspace", ListKind: "WorkspaceList",
				ShortNames: []string{"ws"}, Categories: kcp,
			},
			Scope:  apiextensionsv1.ClusterScoped,
			Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Type", Type: "string", JSONPath: ".spec.type.name", Description: "Type of the workspace"},
				{Name: "Region", Type: "string", JSONPath: ".metadata.labels['region']", Description: "The region this workspace is in"},
				{Name: "Phase", Type: "string", JSONPath: ".status.phase", Description: "The current phase (e.g. Scheduling, Initializing, Ready, Deleting)"},
				{Name: "URL", Type: "string", JSONPath: ".spec.URL", Description: "URL to access the workspace"},
				age,
			},
		},
		{
			Model:   tenancyv1alpha1.WorkspaceType{}.OpenAPIModelName(),
			Group:   tenancyv1alpha1.SchemeGroupVersion.Group,
			Version: tenancyv1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "workspacetypes", Singular: "workspacetype", Kind: "WorkspaceType", ListKind: "WorkspaceTypeList",
				Categories: kcp,
			},
			Scope:  apiextensionsv1.ClusterScoped,
			Status: true,
		},
		{
			Model:   topologyv1alpha1.Partition{}.OpenAPIModelName(),
			Group:   topologyv1alpha1.SchemeGroupVersion.Group,
			Version: topologyv1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "partitions", Singular: "partition", Kind: "Partition", ListKind: "PartitionList",
				Categories: kcp,
			},
			Scope: apiextensionsv1.ClusterScoped,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Owner", Type: "string", JSONPath: ".metadata.ownerReferences[*].name"},
				age,
			},
		},
		{
			Model:   topologyv1alpha1.PartitionSet{}.OpenAPIModelName(),
			Group:   topologyv1alpha1.SchemeGroupVersion.Group,
			Version: topologyv1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "partitionsets", Singular: "partitionset", Kind: "PartitionSet", ListKind: "PartitionSetList",
				Categories: kcp,
			},
			Scope:  apiextensionsv1.ClusterScoped,
			Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Count", Type: "string", JSONPath: ".status.count", Description: "Count of the partitions belonging the PartitionSet"},
				age,
			},
		},
		{
			Model:   corev1alpha1.Shard{}.OpenAPIModelName(),
			Group:   corev1alpha1.SchemeGroupVersion.Group,
			Version: corev1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "shards", Singular: "shard", Kind: "Shard", ListKind: "ShardList",
				Categories: kcp,
			},
			Scope:  apiextensionsv1.ClusterScoped,
			Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Region", Type: "string", JSONPath: ".metadata.labels['region']", Description: "The region this workspace is in"},
				{Name: "URL", Type: "string", JSONPath: ".spec.baseURL", Description: "Type URL to directly connect to the shard"},
				{Name: "External URL", Type: "string", JSONPath: ".spec.externalURL", Description: "The URL exposed in logical clusters created on that shard"},
				age,
			},
		},
	}
}
