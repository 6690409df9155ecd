package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Built-in initializers, run by every shard for the logical clusters it
// hosts.
const (
	// OwnerInitializer makes the user in the annotation
	// experimental.tenancy.kcp.io/owner cluster-admin of the new logical
	// cluster (ClusterRoleBinding "workspace-admin").
	OwnerInitializer LogicalClusterInitializer = "system:owner"
	// APIBindingsInitializer binds the defaultAPIBindings of the
	// workspace's type (and the types it extends) and waits until every
	// one is Bound, as kcp's apibinder does.
	APIBindingsInitializer LogicalClusterInitializer = "system:apibindings"
)

// InitializerLabelPrefix prefixes the labels that mark a LogicalCluster as
// waiting for an initializer, so that an initializer's controller can list
// and watch exactly its logical clusters with a label selector.
const InitializerLabelPrefix = "initializer.internal.kcp.io/"

// InitializerLabelKey returns the label key that marks LogicalClusters
// waiting for in. Initializer names are too long and contain colons, so
// the key holds a hash of the name; the value is the same hash.
func InitializerLabelKey(in LogicalClusterInitializer) string {
	return InitializerLabelPrefix + InitializerLabelValue(in)
}

// InitializerLabelValue is the value of the label InitializerLabelKey(in).
func InitializerLabelValue(in LogicalClusterInitializer) string {
	sum := sha256.Sum256([]byte(in))
	return hex.EncodeToString(sum[:])[:32]
}

// HasInitializer tells whether in is among initializers.
func HasInitializer(initializers []LogicalClusterInitializer, in LogicalClusterInitializer) bool {
	return slices.Contains(initializers, in)
}
