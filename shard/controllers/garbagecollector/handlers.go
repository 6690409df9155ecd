package garbagecollector

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// uidKey is the queue key of the garbage collector: the UID of an owner in
// a logical cluster, in Key.Name. Reconciling it handles that owner's
// dependents.
func uidKey(cluster logicalcluster.Name, uid types.UID) reconciler.Key {
	return reconciler.Key{Cluster: cluster, Name: string(uid)}
}

// monitorHandler maps the events of monitored objects to the owners whose
// dependents need attention:
//
//   - an object with owner references enqueues its owners when it is added,
//     when its owner references change (old and new owners) and when it is
//     deleted (a foreground owner may wait for it);
//   - an object being deleted with the orphan or foregroundDeletion
//     finalizer enqueues itself;
//   - a deleted object enqueues itself, for its dependents.
//
// Other updates, such as status changes, enqueue nothing.
func monitorHandler(enqueue func(reconciler.Key)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return
			}
			cluster := logicalcluster.From(m)
			enqueueOwners(enqueue, cluster, m.GetOwnerReferences())
			if deletingWithGCFinalizer(m) {
				enqueue(uidKey(cluster, m.GetUID()))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, err := meta.Accessor(oldObj)
			if err != nil {
				return
			}
			n, err := meta.Accessor(newObj)
			if err != nil {
				return
			}
			cluster := logicalcluster.From(n)
			if deletingWithGCFinalizer(n) {
				enqueue(uidKey(cluster, n.GetUID()))
			}
			if !slices.EqualFunc(o.GetOwnerReferences(), n.GetOwnerReferences(), sameReference) {
				enqueueOwners(enqueue, cluster, o.GetOwnerReferences())
				enqueueOwners(enqueue, cluster, n.GetOwnerReferences())
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			m, err := meta.Accessor(obj)
			if err != nil {
				return
			}
			cluster := logicalcluster.From(m)
			enqueue(uidKey(cluster, m.GetUID()))
			enqueueOwners(enqueue, cluster, m.GetOwnerReferences())
		},
	}
}

func enqueueOwners(enqueue func(reconciler.Key), cluster logicalcluster.Name, refs []metav1.OwnerReference) {
	for _, ref := range refs {
		enqueue(uidKey(cluster, ref.UID))
	}
}

// sameReference compares the parts of owner references the garbage
// collector acts on.
func sameReference(a, b metav1.OwnerReference) bool {
	return a.UID == b.UID && blocks(a) == blocks(b)
}

// blocks tells whether ref blocks the foreground deletion of its owner.
func blocks(ref metav1.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

// deletingWithGCFinalizer tells whether m is being deleted and waits for the
// garbage collector to orphan or delete its dependents.
func deletingWithGCFinalizer(m metav1.Object) bool {
	if m.GetDeletionTimestamp() == nil {
		return false
	}
	f := m.GetFinalizers()
	return slices.Contains(f, metav1.FinalizerOrphanDependents) || slices.Contains(f, metav1.FinalizerDeleteDependents)
}
