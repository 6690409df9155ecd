// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.workload.v1alpha1
// +groupName=workload.kcp.io

// Package v1alpha1 is the workload.kcp.io/v1alpha1 API group, wire-compatible
// with kcp's transparent multi-cluster (TMC) API: SyncTarget, a physical
// cluster that runs the workloads of workspaces through a syncer. Root
// publishes it in the APIExport workload.kcp.io; it is served as a bound
// resource wherever that export is bound.
package v1alpha1
