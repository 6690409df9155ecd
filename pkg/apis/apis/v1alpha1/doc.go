// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.apis.v1alpha1
// +groupName=apis.kcp.io

// Package v1alpha1 is the apis.kcp.io/v1alpha1 API group, wire-compatible
// with kcp's: APIs as a service. APIResourceSchema is an immutable,
// CRD-like definition of one resource that providers export.
package v1alpha1
