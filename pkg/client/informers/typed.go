package informers

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Informer is a shared wildcard informer with a typed cluster-aware lister.
type Informer[T runtime.Object] struct {
	informer cache.SharedIndexInformer
	lister   Lister[T]
}

// NewInformer pairs an informer of this package with a Lister of its store;
// resource is what NotFound errors of the lister name.
func NewInformer[T runtime.Object](informer cache.SharedIndexInformer, resource schema.GroupResource) Informer[T] {
	return Informer[T]{informer: informer, lister: NewLister[T](informer.GetIndexer(), resource)}
}

// Informer returns the shared informer, to add event handlers and to wait
// for its sync.
func (i Informer[T]) Informer() cache.SharedIndexInformer { return i.informer }

// Lister returns the lister over the informer's store.
func (i Informer[T]) Lister() Lister[T] { return i.lister }
