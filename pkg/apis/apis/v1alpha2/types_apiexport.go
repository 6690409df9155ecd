package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// APIExport makes a set of APIResourceSchemas of its logical cluster
// available for binding in other logical clusters, like its v1alpha1 form,
// which is how it is stored. v1alpha2 lists the exported resources by name
// and group and gives each permission claim the verbs it asks for. It is
// cluster-scoped.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIExport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the provider exports.
	Spec APIExportSpec `json:"spec,omitempty"`
	// Status is the identity and the condition of the export.
	Status APIExportStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the export.
func (in *APIExport) GetConditions() conditionsv1alpha1.Conditions { return in.Status.Conditions }

// SetConditions sets the conditions of the export.
func (in *APIExport) SetConditions(c conditionsv1alpha1.Conditions) { in.Status.Conditions = c }

// APIExportSpec is what an APIExport exports.
type APIExportSpec struct {
	// Resources are the exported resources, each defined by an
	// APIResourceSchema of the export's logical cluster named
	// <prefix>.<name>.<group>.
	//
	// +listType=map
	// +listMapKey=group
	// +listMapKey=name
	Resources []ResourceSchema `json:"resources,omitempty"`
	// Identity points at the secret whose hash is the export's identity;
	// when it is not given, a random secret is generated in kcp-system.
	Identity *Identity `json:"identity,omitempty"`
	// MaximalPermissionPolicy bounds what consumers may do with the
	// exported resources.
	MaximalPermissionPolicy *MaximalPermissionPolicy `json:"maximalPermissionPolicy,omitempty"`
	// PermissionClaims are the resources of the consumer the provider asks
	// to reach, and with which verbs.
	//
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	PermissionClaims []PermissionClaim `json:"permissionClaims,omitempty"`
}

// ResourceSchema is an exported resource.
type ResourceSchema struct {
	// Name is the plural name of the resource.
	Name string `json:"name"`
	// Group is the API group of the resource; "" for the core group.
	Group string `json:"group"`
	// Schema is the name of the APIResourceSchema that defines it.
	Schema string `json:"schema"`
	// Storage is where the objects of the resource live.
	Storage ResourceSchemaStorage `json:"storage"`
}

// ResourceSchemaStorage is where the objects of an exported resource live.
// Only crd is served: objects stored like those of a CRD.
type ResourceSchemaStorage struct {
	// CRD stores the objects like those of a CustomResourceDefinition.
	CRD *ResourceSchemaStorageCRD `json:"crd,omitempty"`
	// Virtual is kcp's storage by a virtual workspace; it is refused.
	Virtual *ResourceSchemaStorageVirtual `json:"virtual,omitempty"`
}

// ResourceSchemaStorageCRD stores objects like those of a CRD.
type ResourceSchemaStorageCRD struct{}

// ResourceSchemaStorageVirtual is kcp's storage of a resource by a virtual
// workspace. It is part of the wire format only: exports using it are
// refused.
type ResourceSchemaStorageVirtual struct {
	// Reference is the object that names the virtual workspace.
	Reference corev1.TypedLocalObjectReference `json:"reference"`
	// IdentityHash is the identity of the virtual resource.
	IdentityHash string `json:"identityHash"`
}

// Identity is the secret that identifies an export.
type Identity struct {
	// SecretRef is the secret, whose "key" holds the identity.
	SecretRef *corev1.SecretReference `json:"secretRef,omitempty"`
}

// MaximalPermissionPolicy bounds what consumers may do with the exported
// resources.
type MaximalPermissionPolicy struct {
	// Local checks every request on a bound resource also against the RBAC
	// of the export's logical cluster, for the user and groups prefixed
	// with apis.kcp.io:binding:.
	Local *LocalAPIExportPolicy `json:"local,omitempty"`
}

// LocalAPIExportPolicy is the RBAC of the export's logical cluster.
type LocalAPIExportPolicy struct{}

// PermissionClaim asks for access, with some verbs, to a resource of the
// consumer.
//
// kcp embeds a GroupResource here; the fields are spelled out instead (the
// JSON is the same): server-side apply reads typed objects by reflection
// (structured-merge-diff's reflect cache), which confuses the fields of a
// struct embedded three levels deep, and AcceptablePermissionClaim embeds
// ScopedPermissionClaim, which embeds PermissionClaim.
type PermissionClaim struct {
	// Group is the API group; "" for the core group.
	//
	// +default=""
	Group string `json:"group,omitempty"`
	// Resource is the plural resource name.
	Resource string `json:"resource"`
	// Verbs are the verbs the provider asks to use on the resource; "*"
	// stands for all of them.
	//
	// +listType=set
	Verbs []string `json:"verbs"`
	// IdentityHash is the identity of the export of the resource, for
	// resources that are themselves bound through an export.
	IdentityHash string `json:"identityHash,omitempty"`
	// DefaultSelector, on an export's claim, is the selector that bindings
	// made for a WorkspaceType's defaultAPIBindings accept the claim with
	// (matchAll when unset); a binding that accepts it with another
	// selector has the condition PermissionClaimsValid False with reason
	// PermissionClaimsMismatch. A shard selects claimed objects by
	// matchAll only, so only matchAll is accepted here.
	DefaultSelector *PermissionClaimSelector `json:"defaultSelector,omitempty"`
}

// String returns <resource>.<group>[:<identityHash>].
func (p PermissionClaim) String() string {
	s := p.Resource
	if p.Group != "" {
		s += "." + p.Group
	}
	if p.IdentityHash != "" {
		s += ":" + p.IdentityHash
	}
	return s
}

// EqualGRI tells whether two claims name the same group, resource and
// identity.
func (p PermissionClaim) EqualGRI(o PermissionClaim) bool {
	return p.Group == o.Group && p.Resource == o.Resource && p.IdentityHash == o.IdentityHash
}

// APIExportStatus is the identity and condition of an export.
type APIExportStatus struct {
	// IdentityHash is the hex SHA-256 of the identity secret's key.
	IdentityHash string `json:"identityHash,omitempty"`
	// Conditions of the export.
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
	// VirtualWorkspaces are the URLs of the apiexport virtual workspace
	// that serve the export.
	//
	// +listType=atomic
	VirtualWorkspaces []VirtualWorkspace `json:"virtualWorkspaces,omitempty"`
}

// VirtualWorkspace is a URL of a virtual workspace.
type VirtualWorkspace struct {
	// URL is the base URL.
	URL string `json:"url"`
}

// APIExportList is a list of APIExports.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIExportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []APIExport `json:"items"`
}
