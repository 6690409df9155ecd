package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// PartitionSet divides the Shards its shardSelector selects into
// Partitions, one per combination of the values of its dimensions (label
// keys) that some shard has. The Partitions are generated in the
// PartitionSet's logical cluster and owned by it. It is cluster-scoped.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PartitionSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the dimensions and the shard selector.
	Spec PartitionSetSpec `json:"spec,omitempty"`
	// Status holds the number of partitions and the conditions.
	//
	// +optional
	Status PartitionSetStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the PartitionSet.
func (in *PartitionSet) GetConditions() conditionsv1alpha1.Conditions {
	return in.Status.Conditions
}

// SetConditions sets the conditions of the PartitionSet.
func (in *PartitionSet) SetConditions(c conditionsv1alpha1.Conditions) {
	in.Status.Conditions = c
}

// PartitionSetSpec holds the dimensions and the shard selector.
type PartitionSetSpec struct {
	// Dimensions are Shard label keys: shards are grouped into one
	// partition per combination of their values. A shard without one of
	// them is in no partition.
	//
	// +optional
	// +listType=atomic
	Dimensions []string `json:"dimensions,omitempty"`
	// ShardSelector restricts the shards that are partitioned; every
	// generated partition carries its requirements.
	//
	// +optional
	ShardSelector *metav1.LabelSelector `json:"shardSelector,omitempty"`
}

// PartitionSetStatus holds the number of partitions and the conditions.
type PartitionSetStatus struct {
	// Count is the number of partitions of the set.
	Count uint `json:"count,omitempty"`
	// Conditions of the PartitionSet.
	//
	// +optional
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
}

// Conditions and reasons of a PartitionSet.
const (
	// PartitionSetValid is false when the shard selector is not valid.
	PartitionSetValid conditionsv1alpha1.ConditionType = "PartitionSetValid"
	// PartitionsReady is true when the partitions of the set are up to
	// date.
	PartitionsReady conditionsv1alpha1.ConditionType = "PartitionsReady"

	// PartitionSetInvalidSelectorReason: the shard selector is not valid.
	PartitionSetInvalidSelectorReason = "InvalidSelector"
	// ErrorGeneratingPartitionsReason: the partitions could not be listed,
	// created or deleted.
	ErrorGeneratingPartitionsReason = "ErrorGeneratingPartitions"
)

// PartitionSetList is a list of PartitionSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PartitionSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []PartitionSet `json:"items"`
}
