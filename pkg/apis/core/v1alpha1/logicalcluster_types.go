package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const (
	// LogicalClusterName is the name of the LogicalCluster singleton in every
	// logical cluster.
	LogicalClusterName = "cluster"

	// LogicalClusterFinalizer is put on the owner of a LogicalCluster
	// (usually a Workspace) so that the owner outlives its logical cluster.
	// It is removed when the LogicalCluster is gone.
	LogicalClusterFinalizer = "core.kcp.io/logicalcluster"
)

// Annotations on LogicalCluster objects.
const (
	// LogicalClusterPathAnnotationKey holds the canonical path of a logical
	// cluster (e.g. root:org:team). The system maintains it on LogicalCluster
	// objects and on objects that other logical clusters reference by path.
	LogicalClusterPathAnnotationKey = logicalcluster.PathAnnotationKey

	// LogicalClusterTypeAnnotationKey holds the fully qualified WorkspaceType
	// of the workspace backed by the logical cluster, as "<path>:<name>"
	// (e.g. root:universal).
	LogicalClusterTypeAnnotationKey = "internal.tenancy.kcp.io/type"

	// LogicalClusterShardAnnotationKey holds the name of the shard the
	// logical cluster lives on.
	LogicalClusterShardAnnotationKey = "core.kcp.io/shard"

	// LogicalClusterOwnerShardAnnotationKey names the shard of the
	// Workspace that owns the logical cluster (the shard that created it),
	// so that the orphan sweep asks that shard, and only that shard,
	// whether the owner is gone.
	LogicalClusterOwnerShardAnnotationKey = "tessera.dev/owner-shard"

	// RequiredGroupsAnnotationKey restricts access to the logical cluster to
	// members of certain groups: a comma-separated (OR) list of
	// semicolon-separated (AND) group names. It is copied to child
	// workspaces when they are scheduled.
	RequiredGroupsAnnotationKey = "authorization.kcp.io/required-groups"
)

// Condition types and reasons of LogicalClusters (and of the Workspaces that
// mirror them).
const (
	// WorkspaceInitialized is True when every initializer has finished.
	WorkspaceInitialized conditionsv1alpha1.ConditionType = "WorkspaceInitialized"
	// WorkspaceInitializedInitializerExists is the WorkspaceInitialized
	// reason while at least one initializer is left.
	WorkspaceInitializedInitializerExists = "InitializerExists"

	// WorkspaceContentDeleted is True when every object in the logical
	// cluster has been deleted.
	WorkspaceContentDeleted conditionsv1alpha1.ConditionType = "WorkspaceContentDeleted"

	// WorkspaceDeletionContentSuccess is False while deleting the content of
	// the logical cluster runs into errors.
	WorkspaceDeletionContentSuccess conditionsv1alpha1.ConditionType = "WorkspaceDeletionContentSuccess"
)

// LogicalCluster describes the logical cluster it lives in. Its existence
// defines the logical cluster; it is used to authorize requests to the
// logical cluster and to track its state.
//
// A LogicalCluster is always named "cluster".
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=kcp
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The current phase (e.g. Scheduling, Initializing, Ready)"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.URL`,description="URL to access the logical cluster"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LogicalCluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec LogicalClusterSpec `json:"spec,omitempty"`

	// +optional
	Status LogicalClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the LogicalCluster.
func (in *LogicalCluster) GetConditions() conditionsv1alpha1.Conditions {
	return in.Status.Conditions
}

// SetConditions replaces the conditions of the LogicalCluster.
func (in *LogicalCluster) SetConditions(c conditionsv1alpha1.Conditions) {
	in.Status.Conditions = c
}

var _ conditionsv1alpha1.Setter = &LogicalCluster{}

// LogicalClusterPhaseType is the phase of a logical cluster.
//
// +enum
// +kubebuilder:validation:Enum=Scheduling;Initializing;Ready;Unavailable
type LogicalClusterPhaseType string

const (
	// LogicalClusterPhaseScheduling means the logical cluster is being
	// created on a shard.
	LogicalClusterPhaseScheduling LogicalClusterPhaseType = "Scheduling"
	// LogicalClusterPhaseInitializing means initializers are still running.
	LogicalClusterPhaseInitializing LogicalClusterPhaseType = "Initializing"
	// LogicalClusterPhaseReady means the logical cluster can be used.
	LogicalClusterPhaseReady LogicalClusterPhaseType = "Ready"
	// LogicalClusterPhaseUnavailable means the logical cluster cannot be used
	// right now (e.g. while it moves to another shard or a mount is not
	// ready); the front-proxy does not route to it.
	LogicalClusterPhaseUnavailable LogicalClusterPhaseType = "Unavailable"
)

// LogicalClusterInitializer names a controller that initializes new logical
// clusters, usually "<workspace type path>:<workspace type name>", or
// "system:<name>" for built-in initializers.
//
// +kubebuilder:validation:Pattern:="^([a-z0-9]([-a-z0-9]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[a-z0-9][a-z0-9]([-a-z0-9]*[a-z0-9])?))|(system:.+)$"
type LogicalClusterInitializer string

// LogicalClusterSpec is the desired state of a LogicalCluster.
type LogicalClusterSpec struct {
	// directlyDeletable says whether users may delete the logical cluster from
	// within, by deleting its LogicalCluster object.
	//
	// +optional
	// +kubebuilder:default=false
	DirectlyDeletable bool `json:"directlyDeletable,omitempty"`

	// owner is the object that controls the life-cycle of this logical cluster
	// (usually a Workspace). When the LogicalCluster is deleted, the finalizer
	// core.kcp.io/logicalcluster is removed from the owner; if the owner still
	// exists then, it is deleted too.
	//
	// +optional
	Owner *LogicalClusterOwner `json:"owner,omitempty"`

	// initializers are set by the system on creation and copied to status
	// when initialization starts.
	//
	// +optional
	// +listType=atomic
	Initializers []LogicalClusterInitializer `json:"initializers,omitempty"`
}

// LogicalClusterOwner refers to the object that controls the life-cycle of a
// LogicalCluster, possibly in another logical cluster.
type LogicalClusterOwner struct {
	// apiVersion is the group and version of the owner, e.g.
	// tenancy.kcp.io/v1alpha1.
	//
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^([^/]+/)?[^/]+$`
	APIVersion string `json:"apiVersion"`

	// resource is the plural resource name of the owner, e.g. workspaces.
	//
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Resource string `json:"resource"`

	// name is the name of the owner.
	//
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// namespace is the namespace of the owner, empty for cluster-scoped
	// owners.
	//
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// cluster is the name of the logical cluster the owner lives in.
	//
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Cluster string `json:"cluster"`

	// uid is the UID of the owner.
	//
	// +required
	// +kubebuilder:validation:Required
	UID types.UID `json:"uid"`
}

// LogicalClusterStatus is the observed state of a LogicalCluster.
type LogicalClusterStatus struct {
	// URL is the address of the Kubernetes-cluster-like endpoint of the
	// logical cluster, usable with standard Kubernetes clients and kubectl.
	//
	// +optional
	// +kubebuilder:validation:Format=uri
	URL string `json:"URL,omitempty"`

	// phase of the logical cluster (Scheduling, Initializing, Ready,
	// Unavailable).
	//
	// +optional
	// +kubebuilder:default=Scheduling
	Phase LogicalClusterPhaseType `json:"phase,omitempty"`

	// conditions are the current observations of the logical cluster's state.
	//
	// +optional
	// +listType=atomic
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`

	// initializers still to finish. They are copied from spec when
	// initialization starts, and each one is removed by its controller when
	// done. The logical cluster stays in phase Initializing until none is
	// left.
	//
	// +optional
	// +listType=atomic
	Initializers []LogicalClusterInitializer `json:"initializers,omitempty"`
}

// LogicalClusterList is a list of LogicalClusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type LogicalClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the LogicalClusters.
	Items []LogicalCluster `json:"items"`
}
