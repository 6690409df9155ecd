// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.scheduling.v1alpha1
// +groupName=scheduling.kcp.io

// Package v1alpha1 is the scheduling.kcp.io/v1alpha1 API group,
// wire-compatible with kcp's transparent multi-cluster (TMC) API: Location,
// a set of SyncTargets selected by their labels, and Placement, a user's
// choice of one Location for the namespaces of a workspace. Root publishes
// it in the APIExport scheduling.kcp.io; it is served as a bound resource
// wherever that export is bound.
package v1alpha1
