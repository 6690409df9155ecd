package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// Annotations and labels on Workspaces.
const (
	// ExperimentalWorkspaceOwnerAnnotationKey holds the user who created a
	// workspace, as JSON of an authentication/v1 UserInfo. It is set at
	// creation from the request's user, copied to the workspace's
	// LogicalCluster, and the owner becomes cluster-admin in the workspace.
	ExperimentalWorkspaceOwnerAnnotationKey = "experimental.tenancy.kcp.io/owner"

	// WorkspacePhaseLabel mirrors status.phase of a Workspace, so that
	// workspaces can be selected by phase.
	WorkspacePhaseLabel = "tenancy.kcp.io/phase"

	// WorkspaceShardAnnotationKey names the shard the logical cluster of a
	// Workspace was scheduled onto.
	WorkspaceShardAnnotationKey = corev1alpha1.LogicalClusterShardAnnotationKey
)

// Workspace conditions and reasons.
const (
	// WorkspaceScheduled is True when the logical cluster of the workspace
	// has been created on a shard.
	WorkspaceScheduled conditionsv1alpha1.ConditionType = "WorkspaceScheduled"
	// WorkspaceReasonUnschedulable: no shard matches spec.location.selector,
	// or creating the logical cluster failed.
	WorkspaceReasonUnschedulable = "Unschedulable"
	// WorkspaceReasonUnavailable: the shard of the logical cluster cannot be
	// reached.
	WorkspaceReasonUnavailable = "Unavailable"
)

// Workspace defines a generic Kubernetes-cluster-like endpoint, with
// standard Kubernetes discovery, OpenAPI and resource API endpoints. It is
// the child of the logical cluster it is created in, and its own logical
// cluster (spec.cluster) is reachable under the parent's path joined with
// the Workspace's name.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=kcp,shortName=ws
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type.name`,description="Type of the workspace"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The current phase (e.g. Scheduling, Initializing, Ready)"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.URL`,description="URL to access the workspace"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Workspace struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec WorkspaceSpec `json:"spec,omitempty"`

	// +optional
	Status WorkspaceStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the Workspace.
func (in *Workspace) GetConditions() conditionsv1alpha1.Conditions {
	return in.Status.Conditions
}

// SetConditions replaces the conditions of the Workspace.
func (in *Workspace) SetConditions(c conditionsv1alpha1.Conditions) {
	in.Status.Conditions = c
}

var _ conditionsv1alpha1.Setter = &Workspace{}

// WorkspaceSpec is the desired state of a Workspace.
type WorkspaceSpec struct {
	// type defines what the workspace is initialized with and where it may
	// appear in the tree. When it is not given, the default child type of
	// the parent's type is used. It cannot change.
	//
	// +optional
	Type *WorkspaceTypeReference `json:"type,omitempty"`

	// location constrains the shards the workspace can be scheduled onto.
	//
	// +optional
	Location *WorkspaceLocation `json:"location,omitempty"`

	// cluster is the name of the logical cluster this workspace is backed
	// by. It is set by the system when the workspace is scheduled.
	//
	// +optional
	Cluster string `json:"cluster,omitempty"`

	// URL is the address under which the workspace can be accessed. It is
	// set by the system when the workspace is scheduled.
	//
	// +optional
	// +kubebuilder:validation:Format=uri
	URL string `json:"URL,omitempty"`
}

// WorkspaceTypeReference refers to a WorkspaceType by name and the path of
// the logical cluster it lives in.
type WorkspaceTypeReference struct {
	// name is the name of the WorkspaceType.
	//
	// +required
	// +kubebuilder:validation:Required
	Name WorkspaceTypeName `json:"name"`

	// path is the path of the logical cluster of the WorkspaceType. When it
	// is empty, the type is looked up in the parent workspace and then in
	// root; the admission stores the path it was found under.
	//
	// +optional
	// +kubebuilder:validation:Pattern:="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	Path string `json:"path,omitempty"`
}

// String returns the reference as "<path>:<name>", or "<name>" without a path.
func (r WorkspaceTypeReference) String() string {
	if r.Path == "" {
		return string(r.Name)
	}
	return r.Path + ":" + string(r.Name)
}

// WorkspaceTypeName is the name of a WorkspaceType.
//
// +kubebuilder:validation:Pattern=`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`
type WorkspaceTypeName string

// WorkspaceLocation constrains where a workspace is scheduled.
type WorkspaceLocation struct {
	// selector selects the shards the workspace can be scheduled onto, by
	// their labels.
	//
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// WorkspaceStatus is the observed state of a Workspace.
type WorkspaceStatus struct {
	// phase of the workspace (Scheduling, Initializing, Ready, Unavailable).
	//
	// +optional
	// +kubebuilder:default=Scheduling
	Phase corev1alpha1.LogicalClusterPhaseType `json:"phase,omitempty"`

	// conditions are the current observations of the workspace's state.
	//
	// +optional
	// +listType=atomic
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`

	// initializers still to finish on the workspace's logical cluster.
	//
	// +optional
	// +listType=atomic
	Initializers []corev1alpha1.LogicalClusterInitializer `json:"initializers,omitempty"`
}

// WorkspaceList is a list of Workspaces.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WorkspaceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Workspaces.
	Items []Workspace `json:"items"`
}
