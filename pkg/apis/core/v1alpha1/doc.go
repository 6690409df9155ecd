// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.core.v1alpha1
// +groupName=core.kcp.io

// Package v1alpha1 is the core.kcp.io/v1alpha1 API group, wire-compatible
// with kcp's: LogicalCluster, the singleton object named "cluster" whose
// existence inside a logical cluster defines that logical cluster, and
// Shard, which describes one server of an installation.
//
// OpenAPI model names follow the names kcp's own (CRD-based) schemas have,
// e.g. io.kcp.core.v1alpha1.LogicalCluster.
package v1alpha1
