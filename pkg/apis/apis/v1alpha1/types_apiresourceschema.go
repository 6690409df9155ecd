package v1alpha1

import (
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// APIResourceSchema describes one resource of an API group, like a
// CustomResourceDefinition, but immutable and named
// <prefix>.<plural>.<group>: a provider publishes a new schema for each
// change and points its APIExport at it. It is cluster-scoped.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIResourceSchema struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the resource. It cannot change.
	Spec APIResourceSchemaSpec `json:"spec,omitempty"`
}

// APIResourceSchemaSpec is the definition of a resource, as in a
// CustomResourceDefinition spec.
type APIResourceSchemaSpec struct {
	// Group is the API group of the resource; "" for the core group.
	Group string `json:"group"`
	// Names are the resource, kind, list kind, singular, short names and
	// categories.
	Names apiextensionsv1.CustomResourceDefinitionNames `json:"names"`
	// Scope is Cluster or Namespaced.
	Scope apiextensionsv1.ResourceScope `json:"scope"`
	// Versions are the versions of the resource; exactly one is the storage
	// version.
	//
	// +listType=map
	// +listMapKey=name
	Versions []APIResourceVersion `json:"versions"`
	// NameValidation is how object names are validated: DNS1123Subdomain
	// (the default) or PathSegment.
	NameValidation string `json:"nameValidation,omitempty"`
	// Conversion is how objects are converted between versions. Only None
	// is served by Tessera.
	Conversion *CustomResourceConversion `json:"conversion,omitempty"`
}

// APIResourceVersion is one version of a resource.
type APIResourceVersion struct {
	// Name is the version, e.g. v1alpha1.
	Name string `json:"name"`
	// Served tells whether the version is served.
	Served bool `json:"served"`
	// Storage tells whether objects are stored in this version.
	Storage bool `json:"storage"`
	// Deprecated marks the version deprecated.
	Deprecated bool `json:"deprecated,omitempty"`
	// DeprecationWarning replaces the default warning of a deprecated
	// version.
	DeprecationWarning *string `json:"deprecationWarning,omitempty"`
	// Schema is the OpenAPI v3 schema of the objects of this version.
	//
	// +kubebuilder:pruning:PreserveUnknownFields
	Schema runtime.RawExtension `json:"schema"`
	// Subresources are the status and scale subresources.
	Subresources apiextensionsv1.CustomResourceSubresources `json:"subresources,omitempty"`
	// AdditionalPrinterColumns are the columns of kubectl get.
	//
	// +listType=atomic
	AdditionalPrinterColumns []apiextensionsv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`
	// SelectableFields are fields field selectors may select on.
	//
	// +listType=atomic
	SelectableFields []apiextensionsv1.SelectableField `json:"selectableFields,omitempty"`
}

// CustomResourceConversion is how objects are converted between versions.
type CustomResourceConversion struct {
	// Strategy is None or Webhook.
	Strategy ConversionStrategyType `json:"strategy"`
	// Webhook configures webhook conversion.
	Webhook *WebhookConversion `json:"webhook,omitempty"`
}

// ConversionStrategyType is a conversion strategy.
type ConversionStrategyType string

// Conversion strategies.
const (
	NoneConverter    ConversionStrategyType = "None"
	WebhookConverter ConversionStrategyType = "Webhook"
)

// WebhookConversion configures webhook conversion.
type WebhookConversion struct {
	// ClientConfig says how to reach the webhook.
	ClientConfig *WebhookClientConfig `json:"clientConfig,omitempty"`
	// ConversionReviewVersions are the ConversionReview versions the
	// webhook understands.
	//
	// +listType=atomic
	ConversionReviewVersions []string `json:"conversionReviewVersions"`
}

// WebhookClientConfig says how to reach a conversion webhook.
type WebhookClientConfig struct {
	// URL of the webhook.
	URL string `json:"url,omitempty"`
	// CABundle verifies the webhook's serving certificate.
	CABundle []byte `json:"caBundle,omitempty"`
}

// APIResourceSchemaList is a list of APIResourceSchemas.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type APIResourceSchemaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []APIResourceSchema `json:"items"`
}

// GetSchema decodes the version's OpenAPI v3 schema; nil if there is none.
func (v *APIResourceVersion) GetSchema() (*apiextensionsv1.JSONSchemaProps, error) {
	if v.Schema.Raw == nil {
		return nil, nil
	}
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(v.Schema.Raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// SetSchema encodes s as the version's OpenAPI v3 schema.
func (v *APIResourceVersion) SetSchema(s *apiextensionsv1.JSONSchemaProps) error {
	if s == nil {
		v.Schema.Raw = nil
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	v.Schema.Raw = raw
	return nil
}
