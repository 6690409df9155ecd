// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.topology.v1alpha1
// +groupName=topology.kcp.io

// Package v1alpha1 is the topology.kcp.io/v1alpha1 API group, wire-compatible
// with kcp's: Partition, a selection of Shards by their labels, and
// PartitionSet, which has Partitions generated along dimensions (label keys
// of Shards). APIExportEndpointSlices name a Partition to list the endpoints
// of its shards only.
package v1alpha1
