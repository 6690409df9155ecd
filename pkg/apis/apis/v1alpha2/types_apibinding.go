package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// APIBinding binds the resources of an APIExport into its logical cluster,
// like its v1alpha1 form, which is how it is stored. v1alpha2 answers each
// claim with the verbs and the selector it accepts. It is cluster-scoped.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the export and answers its permission claims.
	Spec APIBindingSpec `json:"spec,omitempty"`
	// Status is what is bound.
	Status APIBindingStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the binding.
func (in *APIBinding) GetConditions() conditionsv1alpha1.Conditions { return in.Status.Conditions }

// SetConditions sets the conditions of the binding.
func (in *APIBinding) SetConditions(c conditionsv1alpha1.Conditions) { in.Status.Conditions = c }

// APIBindingSpec names the export and answers its permission claims.
type APIBindingSpec struct {
	// Reference is the export. It cannot change.
	Reference BindingReference `json:"reference"`
	// PermissionClaims accept or reject the export's claims.
	//
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	PermissionClaims []AcceptablePermissionClaim `json:"permissionClaims,omitempty"`
}

// ScopedPermissionClaim is a claim and the objects it reaches.
type ScopedPermissionClaim struct {
	PermissionClaim `json:",inline"`
	// Selector chooses the objects of the resource the claim reaches.
	Selector PermissionClaimSelector `json:"selector"`
}

// AcceptablePermissionClaim is a claim and the consumer's answer.
type AcceptablePermissionClaim struct {
	ScopedPermissionClaim `json:",inline"`
	// State is Accepted or Rejected.
	State AcceptablePermissionClaimState `json:"state"`
}

// AcceptablePermissionClaimState is the answer to a claim.
type AcceptablePermissionClaimState string

// The answers to a claim.
const (
	ClaimAccepted AcceptablePermissionClaimState = "Accepted"
	ClaimRejected AcceptablePermissionClaimState = "Rejected"
)

// PermissionClaimSelector chooses the objects a claim reaches: all of them,
// or those a label selector matches.
type PermissionClaimSelector struct {
	metav1.LabelSelector `json:",inline"`
	// MatchAll reaches every object of the resource.
	MatchAll bool `json:"matchAll,omitempty"`
}

// BindingReference is the export of a binding.
type BindingReference struct {
	// Export names the export by the path of its logical cluster and its
	// name.
	Export *ExportBindingReference `json:"export,omitempty"`
}

// ExportBindingReference names an export.
type ExportBindingReference struct {
	// Path is the logical cluster of the export, by path (root:org:ws) or
	// name; empty means the binding's own logical cluster.
	Path string `json:"path,omitempty"`
	// Name is the name of the export.
	Name string `json:"name"`
}

// APIBindingPhaseType is the phase of a binding.
type APIBindingPhaseType string

// The phases of a binding.
const (
	APIBindingPhaseBinding APIBindingPhaseType = "Binding"
	APIBindingPhaseBound   APIBindingPhaseType = "Bound"
)

// APIBindingStatus is what is bound.
type APIBindingStatus struct {
	// APIExportClusterName is the logical cluster of the export.
	APIExportClusterName string `json:"apiExportClusterName,omitempty"`
	// BoundResources are the resources served through the binding.
	//
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	BoundResources []BoundAPIResource `json:"boundResources,omitempty"`
	// Phase is Binding until every resource is served, then Bound.
	Phase APIBindingPhaseType `json:"phase,omitempty"`
	// Conditions of the binding.
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
	// AppliedPermissionClaims are the accepted claims in effect.
	//
	// +listType=atomic
	AppliedPermissionClaims []ScopedPermissionClaim `json:"appliedPermissionClaims,omitempty"`
	// ExportPermissionClaims are the claims of the export, as last seen.
	//
	// +listType=atomic
	ExportPermissionClaims []PermissionClaim `json:"exportPermissionClaims,omitempty"`
}

// BoundAPIResource is a resource served through a binding.
type BoundAPIResource struct {
	// Group of the resource.
	Group string `json:"group"`
	// Resource is the plural name.
	Resource string `json:"resource"`
	// Schema is the schema it is served with.
	Schema BoundAPIResourceSchema `json:"schema"`
	// StorageVersions are the versions objects were stored in.
	//
	// +listType=set
	StorageVersions []string `json:"storageVersions,omitempty"`
}

// BoundAPIResourceSchema is the schema of a bound resource.
type BoundAPIResourceSchema struct {
	// Name of the APIResourceSchema.
	Name string `json:"name"`
	// UID of the APIResourceSchema.
	UID string `json:"UID"`
	// IdentityHash of the export, under which objects are stored.
	IdentityHash string `json:"identityHash"`
}

// APIBindingList is a list of APIBindings.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []APIBinding `json:"items"`
}
