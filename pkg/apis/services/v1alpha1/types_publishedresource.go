package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// PublishedResource publishes one version of one CustomResourceDefinition
// of the service cluster into the platform, as a resource of the API group
// of the servlet's Service. It is cluster-scoped and lives on the service
// cluster.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PublishedResource struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what to publish and how.
	Spec PublishedResourceSpec `json:"spec"`

	// status reports whether the servlet publishes and syncs the resource.
	//
	// +optional
	Status PublishedResourceStatus `json:"status,omitempty"`
}

// PublishedResourceSpec is what a PublishedResource publishes and how its
// objects are synced.
type PublishedResourceSpec struct {
	// resource is the CRD's resource and the one version published.
	Resource SourceResourceDescriptor `json:"resource"`

	// filter restricts the platform objects that are synced.
	//
	// +optional
	Filter *ResourceFilter `json:"filter,omitempty"`

	// naming is how objects are named on the service cluster. Unset fields
	// take the defaults DefaultNamespaceTemplate and DefaultNameTemplate.
	//
	// +optional
	Naming *ResourceNaming `json:"naming,omitempty"`

	// projection changes the type meta the platform sees.
	//
	// +optional
	Projection *ResourceProjection `json:"projection,omitempty"`

	// related are single objects synced along with each object, in either
	// direction.
	//
	// +optional
	// +listType=map
	// +listMapKey=identifier
	Related []RelatedResourceSpec `json:"related,omitempty"`
}

// SourceResourceDescriptor names a resource of the service cluster by
// kind, API group and version.
type SourceResourceDescriptor struct {
	// apiGroup is the CRD's API group.
	APIGroup string `json:"apiGroup"`
	// version is the one version of the CRD that is published.
	Version string `json:"version"`
	// kind is the CRD's kind.
	Kind string `json:"kind"`
}

// ResourceFilter restricts the platform objects that are synced.
type ResourceFilter struct {
	// namespace, if set, syncs only the objects of this namespace.
	//
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// resource, if set, syncs only the objects whose labels it selects.
	//
	// +optional
	Resource *metav1.LabelSelector `json:"resource,omitempty"`
}

// ResourceNaming are the templates of the namespace and name of the local
// copies of platform objects. They may hold the placeholders
// $remoteClusterName, $remoteNamespace, $remoteNamespaceHash, $remoteName
// and $remoteNameHash.
type ResourceNaming struct {
	// namespace is the template of the local namespace.
	//
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name is the template of the local name.
	//
	// +optional
	Name string `json:"name,omitempty"`
}

// ResourceProjection changes the type meta of a published resource in the
// platform. The API group is always the Service's.
type ResourceProjection struct {
	// version is the version in the platform; the source version if unset.
	//
	// +optional
	Version string `json:"version,omitempty"`
	// kind is the kind in the platform; the source kind if unset.
	//
	// +optional
	Kind string `json:"kind,omitempty"`
	// plural is the plural resource name; computed from kind if unset.
	//
	// +optional
	Plural string `json:"plural,omitempty"`
	// shortNames replace the CRD's short names if set.
	//
	// +optional
	// +listType=atomic
	ShortNames []string `json:"shortNames,omitempty"`
	// categories replace the CRD's categories if set.
	//
	// +optional
	// +listType=atomic
	Categories []string `json:"categories,omitempty"`
	// scope is Namespaced or Cluster; the CRD's scope if unset.
	//
	// +optional
	Scope apiextensionsv1.ResourceScope `json:"scope,omitempty"`
}

// RelatedResourceOrigin is the side where a related object is the source
// of truth.
type RelatedResourceOrigin string

const (
	// RelatedResourceOriginService is an object made on the service
	// cluster (by the service's controller) and synced up.
	RelatedResourceOriginService RelatedResourceOrigin = "service"
	// RelatedResourceOriginPlatform is an object made in the consumer's
	// workspace and synced down.
	RelatedResourceOriginPlatform RelatedResourceOrigin = "platform"
)

// RelatedResourceSpec is one object synced along with each object of a
// published resource.
type RelatedResourceSpec struct {
	// identifier names the related object within the PublishedResource.
	Identifier string `json:"identifier"`
	// origin is service or platform.
	Origin RelatedResourceOrigin `json:"origin"`
	// kind is Secret or ConfigMap.
	Kind string `json:"kind"`
	// reference says where in the main object the related object's name
	// and namespace are.
	Reference RelatedResourceReference `json:"reference"`
}

// RelatedResourceReference locates a related object's name and namespace in
// the main object, evaluated on each side.
type RelatedResourceReference struct {
	// name locates the name.
	Name ResourceLocator `json:"name"`
	// namespace locates the namespace; the main object's if unset.
	//
	// +optional
	Namespace *ResourceLocator `json:"namespace,omitempty"`
}

// ResourceLocator is a dotted path to a string field (spec.secretName),
// with an optional regular expression rewrite of its value.
type ResourceLocator struct {
	// path is the dotted path of a string field of the main object.
	Path string `json:"path"`
	// regex rewrites the value found.
	//
	// +optional
	Regex *RegexResourceLocator `json:"regex,omitempty"`
}

// RegexResourceLocator rewrites a located value. An empty pattern replaces
// the whole value with replacement, a constant.
type RegexResourceLocator struct {
	// pattern is a Go regular expression; empty for a constant.
	//
	// +optional
	Pattern string `json:"pattern,omitempty"`
	// replacement replaces every match; $1 and ${name} expand groups.
	//
	// +optional
	Replacement string `json:"replacement,omitempty"`
}

// PublishedResourceStatus is what the servlet observes of a
// PublishedResource.
type PublishedResourceStatus struct {
	// resourceSchemaName is the APIResourceSchema last published for it.
	//
	// +optional
	ResourceSchemaName string `json:"resourceSchemaName,omitempty"`

	// conditions are the servlet's observations; Ready is False with the
	// reason when the spec is invalid or the CRD cannot be published.
	//
	// +optional
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
}

// PublishedResourceList is a list of PublishedResources.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PublishedResourceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the PublishedResources.
	Items []PublishedResource `json:"items"`
}

// GetConditions returns the PublishedResource's conditions.
func (in *PublishedResource) GetConditions() conditionsv1alpha1.Conditions {
	return in.Status.Conditions
}

// SetConditions replaces the PublishedResource's conditions.
func (in *PublishedResource) SetConditions(c conditionsv1alpha1.Conditions) {
	in.Status.Conditions = c
}
