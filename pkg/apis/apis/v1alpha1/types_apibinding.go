package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// APIBinding binds the resources of an APIExport into its logical cluster:
// they are served there like CRDs, stored under the export's identity. It
// is cluster-scoped.
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

// AcceptablePermissionClaim is a claim and the consumer's answer.
type AcceptablePermissionClaim struct {
	PermissionClaim `json:",inline"`
	// State is Accepted or Rejected.
	State AcceptablePermissionClaimState `json:"state"`
}

// AcceptablePermissionClaimState is the answer to a claim.
type AcceptablePermissionClaimState string

// The answers to a claim.
// APIBindingFinalizer holds a deleting binding until the objects of its
// resources are gone.
const APIBindingFinalizer = "apis.kcp.io/apibinding-finalizer"

const (
	ClaimAccepted AcceptablePermissionClaimState = "Accepted"
	ClaimRejected AcceptablePermissionClaimState = "Rejected"
)

// BindingReference is the export of a binding.
type BindingReference struct {
	// Export names the export by the path of its logical cluster and its
	// name.
	Export *ExportBindingReference `json:"export,omitempty"`
	// Workspace is the older form of Export ({path, exportName}); it is
	// accepted on create and converted into Export, and never stored.
	Workspace *WorkspaceExportReference `json:"workspace,omitempty"`
}

// ExportBindingReference names an export.
type ExportBindingReference struct {
	// Path is the logical cluster of the export, by path (root:org:ws) or
	// name; empty means the binding's own logical cluster.
	Path string `json:"path,omitempty"`
	// Name is the name of the export.
	Name string `json:"name"`
}

// WorkspaceExportReference is the older form of ExportBindingReference.
type WorkspaceExportReference struct {
	// Path is the logical cluster of the export.
	Path string `json:"path,omitempty"`
	// ExportName is the name of the export.
	ExportName string `json:"exportName"`
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
	AppliedPermissionClaims []PermissionClaim `json:"appliedPermissionClaims,omitempty"`
	// ExportPermissionClaims are the claims of the export, as last seen.
	//
	// +listType=atomic
	ExportPermissionClaims []PermissionClaim `json:"exportPermissionClaims,omitempty"`
}

// Conditions and reasons of an APIBinding.
const (
	// APIExportValid is true when the export was found and is usable.
	APIExportValid conditionsv1alpha1.ConditionType = "APIExportValid"
	// APIExportInvalidReferenceReason: the reference is malformed.
	APIExportInvalidReferenceReason = "APIExportInvalidReference"
	// APIExportNotFoundReason: no export of that name at that path.
	APIExportNotFoundReason = "APIExportNotFound"
	// APIResourceSchemaInvalidReason: a schema is missing or invalid.
	APIResourceSchemaInvalidReason = "APIResourceSchemaInvalid"
	// InternalErrorReason: something went wrong inside the shard.
	InternalErrorReason = "InternalError"
	// InitialBindingCompleted is true once the resources were first served.
	InitialBindingCompleted conditionsv1alpha1.ConditionType = "InitialBindingCompleted"
	// LogicalClusterNotFoundReason: the export's logical cluster is unknown.
	LogicalClusterNotFoundReason = "LogicalClusterNotFound"
	// WaitingForEstablishedReason: the resources are not served yet.
	WaitingForEstablishedReason = "WaitingForEstablished"
	// BindingUpToDate is true when the bound resources follow the export's
	// latest schemas.
	BindingUpToDate conditionsv1alpha1.ConditionType = "BindingUpToDate"
	// NamingConflictsReason: a CRD or another binding serves a resource.
	NamingConflictsReason = "NamingConflicts"
	// PermissionClaimsValid is true when the claims are well formed.
	PermissionClaimsValid conditionsv1alpha1.ConditionType = "PermissionClaimsValid"
	// InvalidPermissionClaimsReason: an accepted claim is not one the
	// export makes.
	InvalidPermissionClaimsReason = "InvalidPermissionClaims"
	// PermissionClaimsMismatchReason: an accepted claim has other verbs
	// than the export's, or another selector than its defaultSelector
	// (a warning: the claim is in effect with the verbs both allow).
	PermissionClaimsMismatchReason = "PermissionClaimsMismatch"
	// PermissionClaimsApplied is true when the accepted claims are in
	// effect.
	PermissionClaimsApplied conditionsv1alpha1.ConditionType = "PermissionClaimsApplied"
)

// Annotations of the CRDs a shard serves bound resources with (they are
// synthetic: built from the schema, never stored).
const (
	// AnnotationBoundCRDKey marks a CRD that serves a bound resource.
	AnnotationBoundCRDKey = "apis.kcp.io/bound-crd"
	// AnnotationSchemaClusterKey is the logical cluster of its schema.
	AnnotationSchemaClusterKey = "apis.kcp.io/schema-cluster"
	// AnnotationSchemaNameKey is the name of its schema.
	AnnotationSchemaNameKey = "apis.kcp.io/schema-name"
	// AnnotationAPIIdentityKey is the identity hash its objects are stored
	// under.
	AnnotationAPIIdentityKey = "apis.kcp.io/identity"
)

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
