// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.conditions.v1alpha1

// Package v1alpha1 holds the condition type that kcp's APIs (core.kcp.io,
// tenancy.kcp.io, apis.kcp.io, ...) embed in their status, with kcp's JSON
// field names (type, status, severity, lastTransitionTime, reason, message),
// and small helpers to read and write conditions on any object that exposes
// them through Getter and Setter.
//
// It is wire-compatible with kcp's
// sdk/apis/third_party/conditions/apis/conditions/v1alpha1, which in turn
// follows the Cluster API condition type.
package v1alpha1
