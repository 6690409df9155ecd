package storage

import "github.com/tessera-dev/tessera/pkg/logicalcluster"

// ClusterOfKey returns the logical cluster of an etcd key stored under the
// resource prefix prefix (both without the etcd root, or both with it).
func ClusterOfKey(prefix, key string) (logicalcluster.Name, error) {
	return clusterFromKey(prefix, key)
}
