package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// RootShard is the name of the root shard, the shard that hosts the root
// logical cluster.
const RootShard = "root"

// ShardRegionLabelKey is the label on a Shard that names its region. It is
// shown in the Region column of `kubectl get shards`.
const ShardRegionLabelKey = "region"

// Shard describes a server of the installation on which logical clusters
// live. Shard objects live in the root logical cluster.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=kcp
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.metadata.labels['region']`,description="The region this shard is in"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.baseURL`,description="URL to directly connect to the shard"
// +kubebuilder:printcolumn:name="External URL",type=string,JSONPath=`.spec.externalURL`,description="The URL exposed in logical clusters created on that shard"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Shard struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ShardSpec `json:"spec,omitempty"`

	// +optional
	Status ShardStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the Shard.
func (in *Shard) GetConditions() conditionsv1alpha1.Conditions {
	return in.Status.Conditions
}

// SetConditions replaces the conditions of the Shard.
func (in *Shard) SetConditions(c conditionsv1alpha1.Conditions) {
	in.Status.Conditions = c
}

var _ conditionsv1alpha1.Setter = &Shard{}

// ShardSpec is the desired state of a Shard.
type ShardSpec struct {
	// baseURL is the address of the shard for direct connections, e.g. from a
	// front-proxy that routes requests to shards, or from other shards.
	//
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:MinLength=1
	BaseURL string `json:"baseURL"`

	// externalURL is the address presented to users in the URLs of
	// workspaces on this shard, usually that of the front-proxy. Changing it
	// invalidates the kubeconfigs of existing clients, so the old address
	// must keep working. Defaults to baseURL.
	//
	// +optional
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:MinLength=1
	ExternalURL string `json:"externalURL,omitempty"`

	// virtualWorkspaceURL is the address of the virtual workspace server of
	// this shard: direct, through a front-proxy or a load balancer. It is
	// what APIExport endpoints point to. Defaults to baseURL.
	//
	// +optional
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:MinLength=1
	VirtualWorkspaceURL string `json:"virtualWorkspaceURL,omitempty"`
}

// ShardStatus is the observed state of a Shard.
type ShardStatus struct {
	// capacity is the set of resources that logical clusters can be
	// scheduled into.
	//
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// conditions are the current observations of the shard's state.
	//
	// +optional
	// +listType=atomic
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
}

// ShardList is a list of Shards.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ShardList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Shards.
	Items []Shard `json:"items"`
}
