package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Service is a service offered in the platform: all the resources that one
// servlet publishes, under one API group. It is cluster-scoped and lives in
// the service owner's platform workspace, beside the APIExport (named after
// spec.apiGroup) and the APIResourceSchemas the servlet makes for it.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Service struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the service.
	Spec ServiceSpec `json:"spec"`
}

// ServiceSpec describes a Service.
type ServiceSpec struct {
	// apiGroup is the API group of every published resource, and the name
	// of the service's APIExport.
	APIGroup string `json:"apiGroup"`

	// catalogMetadata is how the service is shown to consumers.
	//
	// +optional
	CatalogMetadata CatalogMetadata `json:"catalogMetadata,omitempty"`
}

// CatalogMetadata is how a Service is shown in a catalog.
type CatalogMetadata struct {
	// title is a short human-readable name.
	//
	// +optional
	Title string `json:"title,omitempty"`
	// description says what the service does.
	//
	// +optional
	Description string `json:"description,omitempty"`
}

// ServiceList is a list of Services.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ServiceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Services.
	Items []Service `json:"items"`
}
