package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// APIExportEndpointSlice lists the URLs at which the apiexport virtual
// workspace serves an export: one per shard, optionally only the shards of
// a Partition. It is cluster-scoped.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIExportEndpointSlice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the export and the partition.
	Spec APIExportEndpointSliceSpec `json:"spec,omitempty"`
	// Status lists the endpoints.
	Status APIExportEndpointSliceStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the slice.
func (in *APIExportEndpointSlice) GetConditions() conditionsv1alpha1.Conditions {
	return in.Status.Conditions
}

// SetConditions sets the conditions of the slice.
func (in *APIExportEndpointSlice) SetConditions(c conditionsv1alpha1.Conditions) {
	in.Status.Conditions = c
}

// APIExportEndpointSliceSpec names the export and the partition.
type APIExportEndpointSliceSpec struct {
	// APIExport is the export. It cannot change.
	APIExport ExportBindingReference `json:"export"`
	// Partition names a Partition in the slice's logical cluster; only
	// the shards it selects are listed.
	Partition string `json:"partition,omitempty"`
}

// APIExportEndpointSliceStatus lists the endpoints.
type APIExportEndpointSliceStatus struct {
	// Conditions of the slice.
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
	// APIExportEndpoints are the URLs of the export's virtual workspace.
	//
	// +listType=map
	// +listMapKey=url
	APIExportEndpoints []APIExportEndpoint `json:"endpoints,omitempty"`
	// ShardSelector is the selector of the partition, as a string.
	ShardSelector string `json:"shardSelector,omitempty"`
}

// APIExportEndpoint is one URL.
type APIExportEndpoint struct {
	// URL is the base URL of the export's virtual workspace on one shard.
	URL string `json:"url"`
}

// Conditions and reasons of an APIExportEndpointSlice.
const (
	// APIExportEndpointSliceValid is false when the export is not found.
	APIExportEndpointSliceValid conditionsv1alpha1.ConditionType = "APIExportValid"
	// PartitionValid is false when the partition is not found.
	PartitionValid conditionsv1alpha1.ConditionType = "PartitionValid"
	// APIExportEndpointSliceURLsReady is true when the endpoints are known.
	APIExportEndpointSliceURLsReady conditionsv1alpha1.ConditionType = "EndpointURLsReady"
	// PartitionInvalidReferenceReason: the partition is not found.
	PartitionInvalidReferenceReason = "PartitionInvalidReference"
)

// APIExportEndpointSliceList is a list of APIExportEndpointSlices.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIExportEndpointSliceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []APIExportEndpointSlice `json:"items"`
}
