package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// SyncTarget is a physical cluster that runs the workloads of workspaces.
// One syncer per SyncTarget, running on the physical cluster, syncs the
// objects scheduled to it down and their status up, and reports its
// heartbeat here. SyncTargets live in a compute service's workspace,
// invisible to the users whose workloads they run; Locations group them.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type SyncTarget struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the desired state.
	//
	// +optional
	Spec SyncTargetSpec `json:"spec,omitempty"`

	// status holds what the syncer and the controllers observe.
	//
	// +optional
	Status SyncTargetStatus `json:"status,omitempty"`
}

// SyncTargetSpec is the desired state of a SyncTarget.
type SyncTargetSpec struct {
	// unschedulable keeps new workloads off the SyncTarget; those already
	// there stay.
	//
	// +optional
	Unschedulable bool `json:"unschedulable"`

	// evictAfter, once past, moves every workload off the SyncTarget.
	//
	// +optional
	EvictAfter *metav1.Time `json:"evictAfter,omitempty"`

	// supportedAPIExports are the APIExports whose resources the
	// SyncTarget can run. An empty path means the SyncTarget's workspace.
	//
	// +optional
	// +listType=atomic
	SupportedAPIExports []tenancyv1alpha1.APIExportReference `json:"supportedAPIExports,omitempty"`

	// cells are labels naming the cells the SyncTarget belongs to;
	// SyncTargets in the same cells behave as one cluster to workloads.
	//
	// +optional
	Cells map[string]string `json:"cells,omitempty"`
}

// SyncTargetStatus is the observed state of a SyncTarget.
type SyncTargetStatus struct {
	// allocatable is the resources the physical cluster can give to
	// workloads.
	//
	// +optional
	Allocatable *corev1.ResourceList `json:"allocatable,omitempty"`

	// capacity is the total resources of the physical cluster.
	//
	// +optional
	Capacity *corev1.ResourceList `json:"capacity,omitempty"`

	// conditions are the current observations of the SyncTarget's state.
	//
	// +optional
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`

	// syncedResources are the resources the syncer syncs, with their
	// compatibility with the physical cluster.
	//
	// +optional
	// +listType=atomic
	SyncedResources []ResourceToSync `json:"syncedResources,omitempty"`

	// lastSyncerHeartbeatTime is when the syncer last reported that it is
	// alive.
	//
	// +optional
	LastSyncerHeartbeatTime *metav1.Time `json:"lastSyncerHeartbeatTime,omitempty"`

	// virtualWorkspaces are the URLs of the syncer and upsyncer virtual
	// workspaces the syncer talks to, one pair per shard.
	//
	// +optional
	// +listType=atomic
	VirtualWorkspaces []VirtualWorkspace `json:"virtualWorkspaces,omitempty"`

	// tunnelWorkspaces are the URLs of the tunnels to the physical cluster.
	//
	// +optional
	// +listType=atomic
	TunnelWorkspaces []TunnelWorkspace `json:"tunnelWorkspaces,omitempty"`
}

// ResourceToSync is a resource the syncer syncs.
type ResourceToSync struct {
	apisv1alpha1.GroupResource `json:",inline"`

	// versions are the versions of the resource the physical cluster
	// serves.
	//
	// +listType=atomic
	Versions []string `json:"versions"`

	// identityHash is the identity of the APIExport the resource comes
	// from; empty for built-in resources.
	IdentityHash string `json:"identityHash"`

	// state is whether the physical cluster's schema of the resource is
	// compatible with the one in the workspace.
	//
	// +optional
	State ResourceCompatibleState `json:"state,omitempty"`
}

// ResourceCompatibleState is the compatibility of a resource to sync.
//
// +enum
type ResourceCompatibleState string

const (
	// ResourceSchemaPendingState means the compatibility is not known yet.
	ResourceSchemaPendingState ResourceCompatibleState = "Pending"
	// ResourceSchemaAcceptedState means the physical cluster can run it.
	ResourceSchemaAcceptedState ResourceCompatibleState = "Accepted"
	// ResourceSchemaIncompatibleState means its schemas differ.
	ResourceSchemaIncompatibleState ResourceCompatibleState = "Incompatible"
)

// VirtualWorkspace is where a syncer reads and writes a shard's objects.
type VirtualWorkspace struct {
	// syncerURL is the URL of the syncer virtual workspace.
	SyncerURL string `json:"syncerURL"`
	// upsyncerURL is the URL of the upsyncer virtual workspace.
	UpsyncerURL string `json:"upsyncerURL"`
}

// TunnelWorkspace is the URL of a tunnel to the physical cluster.
type TunnelWorkspace struct {
	// url is the URL of the tunnel.
	URL string `json:"url"`
}

// SyncTargetList is a list of SyncTargets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type SyncTargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []SyncTarget `json:"items"`
}

// Conditions of a SyncTarget.
const (
	// SyncerReady is True while the syncer's heartbeat is recent.
	SyncerReady conditionsv1alpha1.ConditionType = "SyncerReady"
	// APIImporterReady is True when the syncer imported the physical
	// cluster's APIs.
	APIImporterReady conditionsv1alpha1.ConditionType = "APIImporterReady"
	// HeartbeatHealthy is True while heartbeats arrive in time.
	HeartbeatHealthy conditionsv1alpha1.ConditionType = "HeartbeatHealthy"
	// SyncerAuthorized is True when the syncer may do what it needs on the
	// physical cluster.
	SyncerAuthorized conditionsv1alpha1.ConditionType = "SyncerAuthorized"

	// ErrorHeartbeatMissedReason is the reason of a False HeartbeatHealthy.
	ErrorHeartbeatMissedReason = "ErrorHeartbeat"
)

// GetConditions returns the SyncTarget's conditions.
func (in *SyncTarget) GetConditions() conditionsv1alpha1.Conditions { return in.Status.Conditions }

// SetConditions replaces the SyncTarget's conditions.
func (in *SyncTarget) SetConditions(c conditionsv1alpha1.Conditions) { in.Status.Conditions = c }
