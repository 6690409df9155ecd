package logicalclusterdeletion

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	lcregistry "github.com/tessera-dev/tessera/shard/registry/logicalcluster"
)

// Finalizer is the finalizer the shard's registry puts on every
// LogicalCluster, and that this controller removes once the content of the
// logical cluster is gone.
const Finalizer = lcregistry.Finalizer

// conflictRetryInterval is how long to wait for the informer to catch up
// after a write conflict.
const conflictRetryInterval = time.Second

// settleTime is how long after its deletion started a logical cluster is
// released at the earliest. Requests admitted just before the shard saw
// the deletion may still be writing; the content is deleted once more
// after this time, so that what they wrote does not outlive the cluster.
// (deletionTimestamp has a resolution of one second.)
const settleTime = 2 * time.Second

// DeleteClusterDataFunc removes every object of a logical cluster from
// storage, except its LogicalCluster. It must be idempotent: it is called
// again after any failure, and when it succeeds nothing of the cluster but
// its LogicalCluster is left.
type DeleteClusterDataFunc func(ctx context.Context, cluster logicalcluster.Name) error

// FinalizersRemainReason is the reason of a False WorkspaceContentDeleted
// condition while objects with finalizers hold the deletion, as kube's
// namespace controller says it.
const FinalizersRemainReason = "SomeFinalizersRemain"

// WaitError is returned by a DeleteClusterDataFunc that cannot go on yet,
// e.g. while child workspaces are still being deleted or finalizers remain.
// The cluster is tried again after After (or on an event); it is not a
// failure.
type WaitError struct {
	After  time.Duration
	Reason string
	// ConditionReason and ConditionMessage, when set, are reported on the
	// LogicalCluster as a False WorkspaceContentDeleted condition.
	ConditionReason  string
	ConditionMessage string
}

func (e *WaitError) Error() string { return "waiting: " + e.Reason }

// deleter reconciles deleted LogicalClusters. Its dependencies are plain
// functions so that it can be tested without an API server.
type deleter struct {
	// getLogicalCluster returns the LogicalCluster of a logical cluster
	// from the informer cache, or a NotFound error.
	getLogicalCluster func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	// deleteClusterData removes the content of a logical cluster.
	deleteClusterData DeleteClusterDataFunc
	// writeStatus writes the status conditions of new, a changed copy of
	// old, and returns the object as stored.
	writeStatus func(ctx context.Context, cluster logicalcluster.Name, old, new *corev1alpha1.LogicalCluster) (*corev1alpha1.LogicalCluster, error)
	// writeFinalizers writes the finalizers of new, a changed copy of old.
	writeFinalizers func(ctx context.Context, cluster logicalcluster.Name, old, new *corev1alpha1.LogicalCluster) error
	// now is the clock; nil is time.Now.
	now func() time.Time
}

// reconcile deletes the content of the logical cluster of key if its
// LogicalCluster is being deleted, then lets the LogicalCluster go.
func (d *deleter) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	if key.Name != corev1alpha1.LogicalClusterName || key.Namespace != "" {
		return reconciler.Result{}, nil
	}
	cached, err := d.getLogicalCluster(key.Cluster)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting LogicalCluster: %w", err)
	}
	if !needsDeletion(cached) {
		return reconciler.Result{}, nil
	}

	if err := d.deleteClusterData(ctx, key.Cluster); err != nil {
		var wait *WaitError
		if errors.As(err, &wait) {
			logger.V(2).Info("Waiting before deleting the content of the logical cluster", "reason", wait.Reason)
			if wait.ConditionReason != "" {
				if err := d.reportWait(ctx, key.Cluster, cached, wait); err != nil {
					return reconciler.Result{}, err
				}
			}
			return reconciler.Result{RequeueAfter: wait.After}, nil
		}
		err = fmt.Errorf("deleting the content of logical cluster %s: %w", key.Cluster, err)
		lc := cached.DeepCopy()
		conditionsv1alpha1.MarkFalse(lc, corev1alpha1.WorkspaceContentDeleted, conditionsv1alpha1.DeletingReason, conditionsv1alpha1.ConditionSeverityInfo,
			"the content of the logical cluster is being deleted")
		conditionsv1alpha1.MarkFalse(lc, corev1alpha1.WorkspaceDeletionContentSuccess, conditionsv1alpha1.DeletionFailedReason, conditionsv1alpha1.ConditionSeverityWarning,
			"%v", err)
		if _, werr := d.writeStatus(ctx, key.Cluster, cached, lc); werr != nil && !apierrors.IsNotFound(werr) && !apierrors.IsConflict(werr) {
			return reconciler.Result{}, utilerrors.NewAggregate([]error{err, werr})
		}
		return reconciler.Result{}, err
	}
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	if wait := settleTime - now().Sub(cached.DeletionTimestamp.Time); wait > 0 {
		logger.V(4).Info("Deleted the content of the logical cluster; deleting once more when late writes have landed", "after", wait)
		return reconciler.Result{RequeueAfter: wait}, nil
	}
	logger.V(2).Info("Deleted the content of the logical cluster")

	current := cached
	if len(cached.Finalizers) > 1 {
		// The LogicalCluster outlives this step: say that its content is
		// gone.
		lc := cached.DeepCopy()
		conditionsv1alpha1.MarkTrue(lc, corev1alpha1.WorkspaceContentDeleted)
		conditionsv1alpha1.MarkTrue(lc, corev1alpha1.WorkspaceDeletionContentSuccess)
		updated, err := d.writeStatus(ctx, key.Cluster, cached, lc)
		if done, result, err := writeOutcome(ctx, err); done {
			return result, err
		}
		current = updated
	}

	lc := current.DeepCopy()
	lc.Finalizers = slices.DeleteFunc(lc.Finalizers, func(f string) bool { return f == Finalizer })
	err = d.writeFinalizers(ctx, key.Cluster, current, lc)
	if done, result, err := writeOutcome(ctx, err); done {
		return result, err
	}
	logger.Info("Deleted logical cluster content, released its LogicalCluster", "finalizersLeft", len(lc.Finalizers))
	return reconciler.Result{}, nil
}

// reportWait says on the LogicalCluster what its deletion waits for, unless
// it says so already.
func (d *deleter) reportWait(ctx context.Context, cluster logicalcluster.Name, cached *corev1alpha1.LogicalCluster, wait *WaitError) error {
	if c := conditionsv1alpha1.Get(cached, corev1alpha1.WorkspaceContentDeleted); c != nil && c.Status == "False" && c.Reason == wait.ConditionReason && c.Message == wait.ConditionMessage {
		return nil
	}
	lc := cached.DeepCopy()
	conditionsv1alpha1.MarkFalse(lc, corev1alpha1.WorkspaceContentDeleted, wait.ConditionReason, conditionsv1alpha1.ConditionSeverityInfo, "%s", wait.ConditionMessage)
	_, err := d.writeStatus(ctx, cluster, cached, lc)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// writeOutcome tells whether a reconcile ends after a write that returned
// err, and with which result and error. NotFound ends it: the LogicalCluster
// is gone. Conflict ends it with a short requeue: the cache was behind.
func writeOutcome(ctx context.Context, err error) (bool, reconciler.Result, error) {
	switch {
	case err == nil:
		return false, reconciler.Result{}, nil
	case apierrors.IsNotFound(err):
		return true, reconciler.Result{}, nil
	case apierrors.IsConflict(err):
		klog.FromContext(ctx).V(4).Info("LogicalCluster changed meanwhile, trying again", "err", err)
		return true, reconciler.Result{RequeueAfter: conflictRetryInterval}, nil
	default:
		return true, reconciler.Result{}, err
	}
}

// needsDeletion tells whether lc is being deleted and still has Finalizer.
func needsDeletion(lc *corev1alpha1.LogicalCluster) bool {
	return lc.DeletionTimestamp != nil && slices.Contains(lc.Finalizers, Finalizer)
}
