package reconciler

import (
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// EnqueueObject enqueues the key of obj, an object or a
// cache.DeletedFinalStateUnknown tombstone.
func (c *Controller) EnqueueObject(obj any) {
	key, err := KeyFor(obj)
	if err != nil {
		klog.Background().Error(err, "Cannot enqueue object", "controller", c.name)
		return
	}
	c.Enqueue(key)
}

// EnqueueHandler returns an event handler that enqueues the key of every
// added, updated and deleted object, tombstones included.
func (c *Controller) EnqueueHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    c.EnqueueObject,
		UpdateFunc: func(_, obj any) { c.EnqueueObject(obj) },
		DeleteFunc: c.EnqueueObject,
	}
}

// EnqueueMappedHandler returns an event handler that enqueues the keys mapFn
// returns for objects of type T, for example the owner of an object or every
// binding that refers to it. An update maps both the old and the new object,
// so that a key the object stops referring to is reconciled too. A deleted
// object is mapped from its last known state; a tombstone without one, and
// objects of another type, are skipped.
func EnqueueMappedHandler[T any](c *Controller, mapFn func(T) []Key) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		t, ok := obj.(T)
		if !ok {
			return
		}
		for _, key := range mapFn(t) {
			c.Enqueue(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			enqueue(oldObj)
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	}
}
