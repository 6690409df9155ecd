// +k8s:deepcopy-gen=package
// +groupName=core.kdp.k8c.io

// Package v1alpha1 is the core.kdp.k8c.io/v1alpha1 API group: Service, the
// platform-side description of what a servlet publishes (its API group and
// catalog entry). It lives in a platform workspace as a per-workspace
// CustomResourceDefinition, which the servlet creates there if missing
// (syncer/servlet/crds); the shard does not serve it natively.
package v1alpha1
