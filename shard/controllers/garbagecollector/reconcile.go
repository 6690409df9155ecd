package garbagecollector

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// foregroundRecheck is when an owner waiting for blocking dependents
	// is looked at again if no event brings it back earlier.
	foregroundRecheck = 30 * time.Second
	// staleRetry is when an owner is looked at again after a write
	// computed from cached state conflicted: the cache is catching up, so
	// this is no failure worth a backoff.
	staleRetry = time.Second
)

// collector garbage collects the dependents of one owner, keyed by the
// owner's UID in a logical cluster. Its dependencies are plain functions, so
// it is tested without an API server.
type collector struct {
	// objectByUID returns the cached object with uid in a logical cluster.
	objectByUID func(cluster logicalcluster.Name, uid types.UID) (object, bool)
	// dependentsOf returns the cached objects of a logical cluster that
	// have an owner reference to uid.
	dependentsOf func(cluster logicalcluster.Name, uid types.UID) []object
	// getOwner reads the object an owner reference of a dependent in
	// namespace (empty for cluster-scoped dependents) points to from the
	// API server. It returns NotFound when no such object can exist: no
	// object of that kind and name, or a kind the cluster does not serve,
	// or a namespaced owner of a cluster-scoped dependent.
	getOwner func(ctx context.Context, cluster logicalcluster.Name, namespace string, ref metav1.OwnerReference) (*metav1.PartialObjectMetadata, error)
	// get reads an object from the API server.
	get func(ctx context.Context, cluster logicalcluster.Name, obj object) (*metav1.PartialObjectMetadata, error)
	// delete deletes an object if it still has uid.
	delete func(ctx context.Context, cluster logicalcluster.Name, obj object, uid types.UID, policy metav1.DeletionPropagation) error
	// patch applies a JSON merge patch to an object.
	patch func(ctx context.Context, cluster logicalcluster.Name, obj object, patch []byte) error
}

// Reconcile handles the dependents of the owner key.Name in key.Cluster:
// while the owner is being deleted with the orphan finalizer it orphans
// them, with the foregroundDeletion finalizer it deletes them first, and
// once the owner is gone it deletes those whose every owner is gone.
func (c *collector) Reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	cluster, uid := key.Cluster, types.UID(key.Name)
	owner, cached := c.objectByUID(cluster, uid)
	if cached {
		ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("owner", klog.KObj(owner.meta), "resource", owner.resource.String()))
		if owner.meta.DeletionTimestamp == nil {
			return reconciler.Result{}, nil
		}
		switch {
		case slices.Contains(owner.meta.Finalizers, metav1.FinalizerOrphanDependents):
			return c.orphanDependents(ctx, cluster, owner)
		case slices.Contains(owner.meta.Finalizers, metav1.FinalizerDeleteDependents):
			return c.deleteDependentsFirst(ctx, cluster, owner)
		}
		// Deleted by others; its dependents follow when it is gone.
		return reconciler.Result{}, nil
	}

	var errs []error
	for _, d := range c.dependentsOf(cluster, uid) {
		if err := c.attemptToDelete(ctx, cluster, d); err != nil {
			errs = append(errs, err)
		}
	}
	return reconciler.Result{}, utilerrors.NewAggregate(errs)
}

// ownerState is what a dependent's owner reference points to.
type ownerState int

const (
	// solid: the owner exists and is not waiting for its dependents.
	solid ownerState = iota
	// waiting: the owner is being deleted in the foreground.
	waiting
	// absent: no object with the reference's UID exists.
	absent
)

// stateOf returns the state of an existing owner.
func stateOf(m *metav1.PartialObjectMetadata) ownerState {
	if m.DeletionTimestamp != nil && slices.Contains(m.Finalizers, metav1.FinalizerDeleteDependents) {
		return waiting
	}
	return solid
}

// ownerStateOf returns the state of an owner of a dependent in namespace,
// from the cache, or from the API server when the cache does not have it:
// an owner is only taken for absent on the API server's word.
func (c *collector) ownerStateOf(ctx context.Context, cluster logicalcluster.Name, namespace string, ref metav1.OwnerReference) (ownerState, error) {
	if owner, ok := c.objectByUID(cluster, ref.UID); ok {
		return stateOf(owner.meta), nil
	}
	live, err := c.getOwner(ctx, cluster, namespace, ref)
	if apierrors.IsNotFound(err) {
		return absent, nil
	}
	if err != nil {
		return 0, fmt.Errorf("looking up owner %s %s: %w", ref.Kind, ref.Name, err)
	}
	if live.UID != ref.UID {
		return absent, nil
	}
	return stateOf(live), nil
}

// attemptToDelete deletes the dependent d if none of its owners is solid,
// and else removes its references to owners that are gone or waiting for
// their dependents. It reads d from the API server first, since the cache
// may lag behind changes to its owner references.
func (c *collector) attemptToDelete(ctx context.Context, cluster logicalcluster.Name, d object) error {
	logger := klog.FromContext(ctx).WithValues("dependent", klog.KObj(d.meta), "dependentResource", d.resource.String())
	latest, err := c.get(ctx, cluster, d)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting dependent %s %s: %w", d.resource.Resource, klog.KObj(d.meta), err)
	}
	if latest.UID != d.meta.UID || latest.DeletionTimestamp != nil || len(latest.OwnerReferences) == 0 {
		return nil
	}

	var solids, unwanted []metav1.OwnerReference
	waitingOwners := false
	for _, ref := range latest.OwnerReferences {
		state, err := c.ownerStateOf(ctx, cluster, latest.Namespace, ref)
		if err != nil {
			return err
		}
		switch state {
		case solid:
			solids = append(solids, ref)
		case waiting:
			waitingOwners = true
			unwanted = append(unwanted, ref)
		case absent:
			unwanted = append(unwanted, ref)
		}
	}

	switch {
	case len(solids) > 0 && len(unwanted) == 0:
		return nil
	case len(solids) > 0:
		// Other owners keep it: only forget the ones that are gone or
		// going.
		keep := slices.DeleteFunc(slices.Clone(latest.OwnerReferences), func(ref metav1.OwnerReference) bool {
			return slices.ContainsFunc(unwanted, func(u metav1.OwnerReference) bool { return u.UID == ref.UID })
		})
		patch, err := ownerReferencesPatch(latest, keep)
		if err != nil {
			return err
		}
		if err := c.patch(ctx, cluster, d, patch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing owner references from dependent %s %s: %w", d.resource.Resource, klog.KObj(d.meta), err)
		}
		logger.V(2).Info("Removed owner references to owners that are gone", "removed", len(unwanted))
		return nil
	}

	policy := propagationFor(latest)
	if dependents := c.dependentsOf(cluster, latest.UID); waitingOwners && len(dependents) > 0 {
		// Its owner waits for it: delete its own dependents first too.
		policy = metav1.DeletePropagationForeground
		// A dependent that waits for its own dependents may be one of
		// its owners, or lead back to one: an ownership cycle, in which
		// each would wait for the other forever. As upstream's
		// collector does, the dependent stops blocking its owners
		// before it is deleted in the foreground, so the cycle unwinds.
		if slices.ContainsFunc(dependents, func(dep object) bool { return stateOf(dep.meta) == waiting }) &&
			slices.ContainsFunc(latest.OwnerReferences, blocks) {
			unblocked := slices.Clone(latest.OwnerReferences)
			for i := range unblocked {
				if blocks(unblocked[i]) {
					unblocked[i].BlockOwnerDeletion = ptr.To(false)
				}
			}
			patch, err := ownerReferencesPatch(latest, unblocked)
			if err != nil {
				return err
			}
			if err := c.patch(ctx, cluster, d, patch); err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
					return nil
				}
				return fmt.Errorf("unblocking the owner references of dependent %s %s: %w", d.resource.Resource, klog.KObj(d.meta), err)
			}
			logger.V(2).Info("Unblocked the owner references of a dependent in a possible ownership cycle")
		}
	}
	if err := c.delete(ctx, cluster, d, latest.UID, policy); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting dependent %s %s: %w", d.resource.Resource, klog.KObj(d.meta), err)
	}
	logger.V(2).Info("Deleted dependent whose owners are gone", "propagation", policy)
	return nil
}

// propagationFor returns the propagation policy of deleting m: as its
// garbage collection finalizers ask, background otherwise.
func propagationFor(m *metav1.PartialObjectMetadata) metav1.DeletionPropagation {
	switch {
	case slices.Contains(m.Finalizers, metav1.FinalizerOrphanDependents):
		return metav1.DeletePropagationOrphan
	case slices.Contains(m.Finalizers, metav1.FinalizerDeleteDependents):
		return metav1.DeletePropagationForeground
	}
	return metav1.DeletePropagationBackground
}

// orphanDependents removes the owner references to owner from its
// dependents, then the orphan finalizer from owner.
func (c *collector) orphanDependents(ctx context.Context, cluster logicalcluster.Name, owner object) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	var (
		errs  []error
		stale bool
	)
	for _, d := range c.dependentsOf(cluster, owner.meta.UID) {
		keep := slices.DeleteFunc(slices.Clone(d.meta.OwnerReferences), func(ref metav1.OwnerReference) bool {
			return ref.UID == owner.meta.UID
		})
		if len(keep) == len(d.meta.OwnerReferences) {
			continue
		}
		patch, err := ownerReferencesPatch(d.meta, keep)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = c.patch(ctx, cluster, d, patch)
		switch {
		case err == nil:
			logger.V(2).Info("Orphaned dependent", "dependent", klog.KObj(d.meta), "dependentResource", d.resource.String())
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			stale = true
		default:
			errs = append(errs, fmt.Errorf("orphaning dependent %s %s: %w", d.resource.Resource, klog.KObj(d.meta), err))
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return reconciler.Result{}, err
	}
	if stale {
		logger.V(3).Info("Dependents changed while being orphaned, retrying")
		return reconciler.Result{RequeueAfter: staleRetry}, nil
	}
	return c.removeFinalizer(ctx, cluster, owner, metav1.FinalizerOrphanDependents)
}

// deleteDependentsFirst deletes the dependents of an owner being deleted in
// the foreground, and removes its foregroundDeletion finalizer once no
// dependent that blocks its deletion is left.
func (c *collector) deleteDependentsFirst(ctx context.Context, cluster logicalcluster.Name, owner object) (reconciler.Result, error) {
	var (
		errs     []error
		blocking int
	)
	for _, d := range c.dependentsOf(cluster, owner.meta.UID) {
		if slices.ContainsFunc(d.meta.OwnerReferences, func(ref metav1.OwnerReference) bool {
			return ref.UID == owner.meta.UID && blocks(ref)
		}) {
			blocking++
		}
		if d.meta.DeletionTimestamp != nil {
			continue
		}
		if err := c.attemptToDelete(ctx, cluster, d); err != nil {
			errs = append(errs, err)
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return reconciler.Result{}, err
	}
	if blocking > 0 {
		klog.FromContext(ctx).V(3).Info("Waiting for blocking dependents to be deleted", "blocking", blocking)
		return reconciler.Result{RequeueAfter: foregroundRecheck}, nil
	}
	return c.removeFinalizer(ctx, cluster, owner, metav1.FinalizerDeleteDependents)
}

// removeFinalizer removes finalizer from the cached owner; the registry
// deletes it when it was the last one. If the owner changed since it was
// cached, it is looked at again shortly.
func (c *collector) removeFinalizer(ctx context.Context, cluster logicalcluster.Name, owner object, finalizer string) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	keep := slices.DeleteFunc(slices.Clone(owner.meta.Finalizers), func(f string) bool { return f == finalizer })
	patch, err := finalizersPatch(owner.meta, keep)
	if err != nil {
		return reconciler.Result{}, err
	}
	err = c.patch(ctx, cluster, owner, patch)
	switch {
	case err == nil:
		logger.V(2).Info("Removed finalizer", "finalizer", finalizer)
	case apierrors.IsNotFound(err):
	case apierrors.IsConflict(err):
		logger.V(3).Info("Owner changed since it was cached, retrying", "finalizer", finalizer)
		return reconciler.Result{RequeueAfter: staleRetry}, nil
	default:
		return reconciler.Result{}, fmt.Errorf("removing finalizer %s: %w", finalizer, err)
	}
	return reconciler.Result{}, nil
}
