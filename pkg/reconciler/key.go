package reconciler

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Key identifies an object of a logical cluster in the work queue. Namespace
// is empty for cluster-scoped objects.
type Key struct {
	Cluster   logicalcluster.Name
	Namespace string
	Name      string
}

// String returns the informer store key, cluster|namespace/name.
func (k Key) String() string {
	return informers.ToKey(k.Cluster, k.Namespace, k.Name)
}

// KeyFor returns the key of an object, whose logical cluster is its
// kcp.io/cluster annotation, or of a cache.DeletedFinalStateUnknown
// tombstone.
func KeyFor(obj any) (Key, error) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return ParseKey(tomb.Key)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return Key{}, fmt.Errorf("object has no meta: %w", err)
	}
	return Key{Cluster: logicalcluster.From(m), Namespace: m.GetNamespace(), Name: m.GetName()}, nil
}

// ParseKey parses an informer store key (cluster|namespace/name).
func ParseKey(key string) (Key, error) {
	cluster, namespace, name, err := informers.SplitKey(key)
	if err != nil {
		return Key{}, err
	}
	return Key{Cluster: cluster, Namespace: namespace, Name: name}, nil
}
