// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.tenancy.v1alpha1
// +groupName=tenancy.kcp.io

// Package v1alpha1 is the tenancy.kcp.io/v1alpha1 API group, wire-compatible
// with kcp's: Workspace, a child logical cluster seen from its parent, and
// WorkspaceType, which sets what a workspace is initialized with and where it
// may appear in the tree.
package v1alpha1
