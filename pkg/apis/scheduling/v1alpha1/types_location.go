package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// LocationLabelsStringAnnotationKey holds a Location's labels as one
	// string, for a printer column.
	LocationLabelsStringAnnotationKey = "scheduling.kcp.io/labels"
	// PlacementAnnotationKey on a namespace names the Placement it is bound
	// to.
	PlacementAnnotationKey = "scheduling.kcp.io/placement"
)

// Location is a set of instances of a resource (SyncTargets) chosen by
// their labels, that Placements select by the Location's own labels. It is
// owned by a compute service; users see it but do not write it.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Location struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the desired state.
	//
	// +optional
	Spec LocationSpec `json:"spec,omitempty"`

	// status counts the Location's instances.
	//
	// +optional
	Status LocationStatus `json:"status,omitempty"`
}

// LocationSpec is the desired state of a Location.
type LocationSpec struct {
	// resource is the resource of the Location's instances.
	//
	// +required
	Resource GroupVersionResource `json:"resource"`

	// description describes the Location for humans.
	//
	// +optional
	Description string `json:"description,omitempty"`

	// availableSelectorLabels are the labels a Placement may select
	// instances of this Location by.
	//
	// +optional
	// +listType=map
	// +listMapKey=key
	AvailableSelectorLabels []AvailableSelectorLabel `json:"availableSelectorLabels,omitempty"`

	// instanceSelector selects the instances of the Location by their
	// labels; without it the Location has no instance.
	//
	// +optional
	InstanceSelector *metav1.LabelSelector `json:"instanceSelector,omitempty"`
}

// GroupVersionResource names a resource.
type GroupVersionResource struct {
	// group is the API group of the resource.
	//
	// +optional
	// +k8s:validation:pattern="^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$"
	Group InstanceGroup `json:"group,omitempty"`

	// version is the version of the API.
	//
	// +required
	// +k8s:validation:pattern="^[a-z][-a-z0-9]*[a-z0-9]$"
	// +k8s:validation:minLength=1
	Version InstanceVersion `json:"version"`

	// resource is the plural name of the resource.
	//
	// +required
	// +k8s:validation:pattern="^[a-z][-a-z0-9]*[a-z0-9]$"
	// +k8s:validation:minLength=1
	Resource InstanceResource `json:"resource"`
}

// InstanceGroup is the API group of a Location's instances; only
// SyncTargets are supported.
//
// +enum
type InstanceGroup string

// InstanceVersion is the API version of a Location's instances.
//
// +enum
type InstanceVersion string

// InstanceResource is the resource of a Location's instances.
//
// +enum
type InstanceResource string

// The only instances a Location has, as in kcp.
const (
	// WorkloadGroup is the group of SyncTargets.
	WorkloadGroup InstanceGroup = "workload.kcp.io"
	// WorkloadVersion is the version of SyncTargets.
	WorkloadVersion InstanceVersion = "v1alpha1"
	// SyncTargetsResource is the resource of SyncTargets.
	SyncTargetsResource InstanceResource = "synctargets"
)

// AvailableSelectorLabel is a label key and its possible values.
type AvailableSelectorLabel struct {
	// key is the label key.
	//
	// +required
	Key LabelKey `json:"key"`

	// values are the possible values.
	//
	// +required
	// +listType=set
	// +k8s:validation:minItems=1
	Values []LabelValue `json:"values"`

	// description describes the label for humans.
	//
	// +optional
	Description string `json:"description,omitempty"`
}

// LabelKey is a label key.
//
// +k8s:validation:pattern="^([a-z0-9]([-a-z0-9]*[a-z0-9](\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?/)?([a-zA-Z0-9][-a-zA-Z0-9_.]{0,61})?[a-zA-Z0-9]$"
// +k8s:validation:maxLength=255
type LabelKey string

// LabelValue is a label value.
//
// +k8s:validation:pattern="^(|([a-z0-9]([-a-z0-9]*[a-z0-9](\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?/)?([a-zA-Z0-9][-a-zA-Z0-9_.]{0,61})?[a-zA-Z0-9])$"
// +k8s:validation:maxLength=63
type LabelValue string

// LocationStatus counts a Location's instances.
type LocationStatus struct {
	// instances is how many instances the Location has.
	//
	// +optional
	Instances *uint32 `json:"instances,omitempty"`

	// availableInstances is how many of them can take workloads.
	//
	// +optional
	AvailableInstances *uint32 `json:"availableInstances,omitempty"`
}

// LocationList is a list of Locations.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type LocationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Location `json:"items"`
}
