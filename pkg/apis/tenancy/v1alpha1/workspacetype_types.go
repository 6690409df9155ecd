package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// The workspace types every installation has, in the root logical cluster.
const (
	RootWorkspaceTypeName         WorkspaceTypeName = "root"
	OrganizationWorkspaceTypeName WorkspaceTypeName = "organization"
	TeamWorkspaceTypeName         WorkspaceTypeName = "team"
	UniversalWorkspaceTypeName    WorkspaceTypeName = "universal"
	HomeWorkspaceTypeName         WorkspaceTypeName = "home"
	HomeRootWorkspaceTypeName     WorkspaceTypeName = "homeroot"
	HomeBucketWorkspaceTypeName   WorkspaceTypeName = "homebucket"
)

// WorkspaceTypeReady is True when the type's status (virtual workspace
// URLs) is complete.
const WorkspaceTypeReady conditionsv1alpha1.ConditionType = "Ready"

// WorkspaceType specifies behaviour of workspaces of this type: their
// initializers, default child type, default API bindings and the types of
// parents and children they may have.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=kcp
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type WorkspaceType struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec WorkspaceTypeSpec `json:"spec,omitempty"`

	// +optional
	Status WorkspaceTypeStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the WorkspaceType.
func (in *WorkspaceType) GetConditions() conditionsv1alpha1.Conditions {
	return in.Status.Conditions
}

// SetConditions replaces the conditions of the WorkspaceType.
func (in *WorkspaceType) SetConditions(c conditionsv1alpha1.Conditions) {
	in.Status.Conditions = c
}

var _ conditionsv1alpha1.Setter = &WorkspaceType{}

// WorkspaceTypeSpec is the desired state of a WorkspaceType.
type WorkspaceTypeSpec struct {
	// initializer says whether workspaces of this type get an initializer,
	// "<cluster of the type>:<type name>", that a controller must remove
	// before the workspace becomes Ready. It can watch the initializing
	// workspaces through the URLs in status.virtualWorkspaces.
	//
	// +optional
	Initializer bool `json:"initializer,omitempty"`

	// extend names other types this type extends: their initializers and
	// default API bindings apply too, and where a parent or child of one of
	// them is allowed, so is this type.
	//
	// +optional
	Extend WorkspaceTypeExtension `json:"extend,omitempty"`

	// additionalWorkspaceLabels are set on every Workspace of this type.
	//
	// +optional
	AdditionalWorkspaceLabels map[string]string `json:"additionalWorkspaceLabels,omitempty"`

	// defaultChildWorkspaceType is the type of child workspaces created
	// without a type. Without it, the parent's extended types are asked; if
	// none has one, child workspaces must name their type.
	//
	// +optional
	DefaultChildWorkspaceType *WorkspaceTypeReference `json:"defaultChildWorkspaceType,omitempty"`

	// limitAllowedChildren restricts the types of child workspaces. Unset
	// allows every type.
	//
	// +optional
	LimitAllowedChildren *WorkspaceTypeSelector `json:"limitAllowedChildren,omitempty"`

	// limitAllowedParents restricts the types of the parent workspace.
	// Unset allows every type.
	//
	// +optional
	LimitAllowedParents *WorkspaceTypeSelector `json:"limitAllowedParents,omitempty"`

	// defaultAPIBindings are the APIExports bound in every workspace of this
	// type when it is initialized.
	//
	// +optional
	// +listType=atomic
	DefaultAPIBindings []APIExportReference `json:"defaultAPIBindings,omitempty"`
}

// WorkspaceTypeExtension lists the types a WorkspaceType extends.
type WorkspaceTypeExtension struct {
	// with are the types that are extended.
	//
	// +optional
	// +listType=atomic
	With []WorkspaceTypeReference `json:"with,omitempty"`
}

// WorkspaceTypeSelector selects WorkspaceTypes.
type WorkspaceTypeSelector struct {
	// none means that no type matches.
	//
	// +optional
	None bool `json:"none,omitempty"`

	// types are the matching types. A type matches when it is listed or
	// extends a listed type.
	//
	// +optional
	// +listType=atomic
	Types []WorkspaceTypeReference `json:"types,omitempty"`
}

// APIExportReference refers to an APIExport by the path of its logical
// cluster and its name.
type APIExportReference struct {
	// path is the path of the logical cluster of the APIExport; empty means
	// the workspace's own.
	//
	// +optional
	Path string `json:"path,omitempty"`

	// export is the name of the APIExport.
	//
	// +required
	// +kubebuilder:validation:Required
	Export string `json:"export"`
}

// WorkspaceTypeStatus is the observed state of a WorkspaceType.
type WorkspaceTypeStatus struct {
	// conditions are the current observations of the type's state.
	//
	// +optional
	// +listType=atomic
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`

	// virtualWorkspaces are the URLs of the initializing-workspaces virtual
	// workspace of this type's initializer, one per shard.
	//
	// +optional
	// +listType=map
	// +listMapKey=url
	VirtualWorkspaces []VirtualWorkspace `json:"virtualWorkspaces,omitempty"`
}

// VirtualWorkspace is the address of a virtual workspace.
type VirtualWorkspace struct {
	// url is the address of the virtual workspace.
	//
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	URL string `json:"url"`
}

// WorkspaceTypeList is a list of WorkspaceTypes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WorkspaceTypeList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the WorkspaceTypes.
	Items []WorkspaceType `json:"items"`
}

// InitializerFor returns the initializer of the WorkspaceType named name in
// the logical cluster cluster: "<cluster>:<name>".
func InitializerFor(cluster string, name WorkspaceTypeName) corev1alpha1.LogicalClusterInitializer {
	return corev1alpha1.LogicalClusterInitializer(cluster + ":" + string(name))
}

// TypeForInitializer splits an initializer of a WorkspaceType into the
// logical cluster and name of the type. System initializers ("system:...")
// belong to no type.
func TypeForInitializer(in corev1alpha1.LogicalClusterInitializer) (cluster string, name WorkspaceTypeName, ok bool) {
	s := string(in)
	if strings.HasPrefix(s, "system:") {
		return "", "", false
	}
	i := strings.LastIndex(s, ":")
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	return s[:i], WorkspaceTypeName(s[i+1:]), true
}
