// +k8s:deepcopy-gen=package
// +groupName=services.kdp.k8c.io

// Package v1alpha1 is the services.kdp.k8c.io/v1alpha1 API group of the
// servlet: PublishedResource, which a service owner creates on the service
// cluster to publish one of its CRDs into the platform. It is a
// CustomResourceDefinition there (syncer/servlet/crds), applied by the
// servlet when it starts; the shard does not serve it.
package v1alpha1
