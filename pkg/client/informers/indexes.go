package informers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const (
	// ClusterIndex indexes objects by logical cluster name.
	ClusterIndex = "cluster"
	// ClusterNamespaceIndex indexes namespaced objects by
	// ClusterNamespaceIndexKey(cluster, namespace).
	ClusterNamespaceIndex = "cluster-namespace"
)

// ClusterIndexFunc indexes an object by its logical cluster.
func ClusterIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("object has no meta: %w", err)
	}
	return []string{logicalcluster.From(m).String()}, nil
}

// ClusterNamespaceIndexFunc indexes a namespaced object by its logical
// cluster and namespace. Cluster-scoped objects are not indexed.
func ClusterNamespaceIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("object has no meta: %w", err)
	}
	if m.GetNamespace() == "" {
		return nil, nil
	}
	return []string{ClusterNamespaceIndexKey(logicalcluster.From(m), m.GetNamespace())}, nil
}

// ClusterNamespaceIndexKey is the ClusterNamespaceIndex value of a namespace
// in a logical cluster.
func ClusterNamespaceIndexKey(cluster logicalcluster.Name, namespace string) string {
	return string(cluster) + ClusterSeparator + namespace
}

// ClusterIndexers returns ClusterIndex and ClusterNamespaceIndex, which every
// informer of this package has and which listers rely on.
func ClusterIndexers() cache.Indexers {
	return cache.Indexers{
		ClusterIndex:          ClusterIndexFunc,
		ClusterNamespaceIndex: ClusterNamespaceIndexFunc,
	}
}
