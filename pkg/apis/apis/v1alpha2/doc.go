// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.apis.v1alpha2
// +groupName=apis.kcp.io

// Package v1alpha2 is the apis.kcp.io/v1alpha2 version of APIExport and
// APIBinding, wire-compatible with kcp's. Objects are stored in
// apis.kcp.io/v1alpha1, whose types are the internal form; what v1alpha1
// cannot express (claim verbs, claim selectors, resources that are not
// named <prefix>.<plural>.<group> schemas) travels in the annotations kcp
// uses for the same purpose, so both versions read and write the same
// objects without loss.
package v1alpha2
