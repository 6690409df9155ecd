package informers

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Lister reads objects of type T from the store of a wildcard informer. Its
// indexer must be keyed by KeyFunc and have the ClusterIndexers, as every
// informer of this package is. Objects are shared with the cache: DeepCopy
// before changing them.
type Lister[T runtime.Object] struct {
	indexer  cache.Indexer
	resource schema.GroupResource
}

// NewLister returns a Lister over indexer. resource is what NotFound errors
// name, as in client-go's listers (for example corev1.Resource("configmap")).
func NewLister[T runtime.Object](indexer cache.Indexer, resource schema.GroupResource) Lister[T] {
	return Lister[T]{indexer: indexer, resource: resource}
}

// List returns the objects of all logical clusters that match selector; a
// nil selector matches everything.
func (l Lister[T]) List(selector labels.Selector) ([]T, error) {
	return filter[T](l.indexer.List(), selector)
}

// Cluster returns a lister for one logical cluster.
func (l Lister[T]) Cluster(cluster logicalcluster.Name) ClusterLister[T] {
	return ClusterLister[T]{indexer: l.indexer, resource: l.resource, cluster: cluster}
}

// ClusterLister reads the objects of one logical cluster.
type ClusterLister[T runtime.Object] struct {
	indexer  cache.Indexer
	resource schema.GroupResource
	cluster  logicalcluster.Name
}

// List returns the objects of the logical cluster that match selector, in
// O(objects in the cluster).
func (l ClusterLister[T]) List(selector labels.Selector) ([]T, error) {
	objs, err := l.indexer.ByIndex(ClusterIndex, l.cluster.String())
	if err != nil {
		return nil, fmt.Errorf("listing %s in logical cluster %q: %w", l.resource, l.cluster, err)
	}
	return filter[T](objs, selector)
}

// Get returns the cluster-scoped object name, or a NotFound error.
func (l ClusterLister[T]) Get(name string) (T, error) {
	return get[T](l.indexer, l.resource, ToKey(l.cluster, "", name), name)
}

// Namespace returns a lister for one namespace of the logical cluster. The
// empty namespace lists the whole cluster, as metav1.NamespaceAll does in
// client-go's listers.
func (l ClusterLister[T]) Namespace(namespace string) NamespaceLister[T] {
	return NamespaceLister[T]{indexer: l.indexer, resource: l.resource, cluster: l.cluster, namespace: namespace}
}

// NamespaceLister reads the objects of one namespace of one logical cluster.
type NamespaceLister[T runtime.Object] struct {
	indexer   cache.Indexer
	resource  schema.GroupResource
	cluster   logicalcluster.Name
	namespace string
}

// List returns the objects of the namespace that match selector, in
// O(objects in the namespace).
func (l NamespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	if l.namespace == "" {
		return ClusterLister[T]{indexer: l.indexer, resource: l.resource, cluster: l.cluster}.List(selector)
	}
	objs, err := l.indexer.ByIndex(ClusterNamespaceIndex, ClusterNamespaceIndexKey(l.cluster, l.namespace))
	if err != nil {
		return nil, fmt.Errorf("listing %s in namespace %q of logical cluster %q: %w", l.resource, l.namespace, l.cluster, err)
	}
	return filter[T](objs, selector)
}

// Get returns the object name of the namespace, or a NotFound error.
func (l NamespaceLister[T]) Get(name string) (T, error) {
	return get[T](l.indexer, l.resource, ToKey(l.cluster, l.namespace, name), name)
}

func get[T runtime.Object](indexer cache.Indexer, resource schema.GroupResource, key, name string) (T, error) {
	var zero T
	obj, exists, err := indexer.GetByKey(key)
	if err != nil {
		return zero, fmt.Errorf("getting %s %q: %w", resource, key, err)
	}
	if !exists {
		return zero, apierrors.NewNotFound(resource, name)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("store of %s holds %T under %q, want %T", resource, obj, key, zero)
	}
	return t, nil
}

func filter[T runtime.Object](objs []any, selector labels.Selector) ([]T, error) {
	everything := selector == nil || selector.Empty()
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		t, ok := obj.(T)
		if !ok {
			var zero T
			return nil, fmt.Errorf("store holds %T, want %T", obj, zero)
		}
		if !everything {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, fmt.Errorf("object has no meta: %w", err)
			}
			if !selector.Matches(labels.Set(m.GetLabels())) {
				continue
			}
		}
		out = append(out, t)
	}
	return out, nil
}
