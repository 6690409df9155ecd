package v1alpha1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// APIExport makes a set of APIResourceSchemas of its logical cluster
// available for binding in other logical clusters. Its identity, a secret
// only the provider holds, decides which objects belong to it: the objects
// of every binding to it are stored under the SHA-256 hash of that secret,
// so two exports of the same group/resource never see each other's
// objects. It is cluster-scoped.
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

// Conditions and reasons of an APIExport.
const (
	// APIExportIdentityValid is true when status.identityHash is the hash
	// of the identity secret.
	APIExportIdentityValid conditionsv1alpha1.ConditionType = "IdentityValid"
	// IdentityVerificationFailedReason: the secret is missing, has no key,
	// or hashes to another identity than the one in the status.
	IdentityVerificationFailedReason = "IdentityVerificationFailed"
	// IdentityGenerationFailedReason: the secret could not be created.
	IdentityGenerationFailedReason = "IdentityGenerationFailed"
	// APIExportVirtualWorkspaceURLsReady is true when the virtual
	// workspace URLs of the export are known.
	APIExportVirtualWorkspaceURLsReady conditionsv1alpha1.ConditionType = "VirtualWorkspaceURLsReady"
	// ErrorGeneratingURLsReason: the URLs could not be computed.
	ErrorGeneratingURLsReason = "ErrorGeneratingURLs"
)

// SecretKeyAPIExportIdentity is the key of the identity in the identity
// secret.
const SecretKeyAPIExportIdentity = "key"

// IdentitySecretNamespace is the namespace, in the export's logical
// cluster, of the identity secrets generated for APIExports.
const IdentitySecretNamespace = "kcp-system"

// MaximalPermissionPolicyRBACUserGroupPrefix prefixes the user and groups of
// a request on a bound resource when it is checked against the provider's
// RBAC (maximal permission policy).
const MaximalPermissionPolicyRBACUserGroupPrefix = "apis.kcp.io:binding:"

// APIExportSpec is what an APIExport exports.
type APIExportSpec struct {
	// LatestResourceSchemas names the APIResourceSchemas, in the export's
	// logical cluster, that bindings serve. Each names
	// <prefix>.<plural>.<group>; two schemas of one group/resource are
	// refused.
	//
	// +listType=set
	LatestResourceSchemas []string `json:"latestResourceSchemas,omitempty"`
	// Identity points at the secret whose hash is the export's identity;
	// when it is not given, a random secret is generated in kcp-system.
	Identity *Identity `json:"identity,omitempty"`
	// MaximalPermissionPolicy bounds what consumers may do with the
	// exported resources.
	MaximalPermissionPolicy *MaximalPermissionPolicy `json:"maximalPermissionPolicy,omitempty"`
	// PermissionClaims are the resources of the consumer the provider asks
	// to reach.
	//
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	PermissionClaims []PermissionClaim `json:"permissionClaims,omitempty"`
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

// PermissionClaim asks for access to a resource of the consumer.
type PermissionClaim struct {
	GroupResource `json:",inline"`
	// All claims every object of the resource; otherwise ResourceSelector
	// names the objects.
	All bool `json:"all,omitempty"`
	// ResourceSelector names the objects claimed.
	//
	// +listType=atomic
	ResourceSelector []ResourceSelector `json:"resourceSelector,omitempty"`
	// IdentityHash is the identity of the export of the resource, for
	// resources that are themselves bound through an export.
	IdentityHash string `json:"identityHash,omitempty"`
}

// String returns <resource>.<group>[:<identityHash>].
func (p PermissionClaim) String() string {
	s := p.Resource
	if p.Group != "" {
		s += "." + p.Group
	}
	if p.IdentityHash != "" {
		s = fmt.Sprintf("%s:%s", s, p.IdentityHash)
	}
	return s
}

// EqualGRI tells whether two claims name the same group, resource and
// identity.
func (p PermissionClaim) EqualGRI(o PermissionClaim) bool {
	return p.Group == o.Group && p.Resource == o.Resource && p.IdentityHash == o.IdentityHash
}

// ResourceSelector names claimed objects.
type ResourceSelector struct {
	// Name of the objects.
	Name string `json:"name,omitempty"`
	// Namespace of the objects.
	Namespace string `json:"namespace,omitempty"`
}

// GroupResource is a resource of an API group.
type GroupResource struct {
	// Group is the API group; "" for the core group.
	//
	// +default=""
	Group string `json:"group,omitempty"`
	// Resource is the plural resource name.
	Resource string `json:"resource"`
}

// APIExportStatus is the identity and condition of an export.
type APIExportStatus struct {
	// IdentityHash is the hex SHA-256 of the identity secret's key.
	IdentityHash string `json:"identityHash,omitempty"`
	// Conditions of the export.
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
	// VirtualWorkspaces are the URLs of the apiexport virtual workspace
	// that serve the export (deprecated in kcp in favour of
	// APIExportEndpointSlices).
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
