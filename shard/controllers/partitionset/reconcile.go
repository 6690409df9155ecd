package partitionset

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// conflictRetry is how long to wait for the informer after a write
// conflict.
const conflictRetry = time.Second

// setReconciler brings the Partitions and the status of PartitionSets up
// to date. Its dependencies are plain functions, so it is tested without
// an API server.
type setReconciler struct {
	// getSet reads a PartitionSet from the informer cache.
	getSet func(cluster logicalcluster.Name, name string) (*topologyv1alpha1.PartitionSet, error)
	// listShards returns the Shards of the installation that selector
	// selects.
	listShards func(selector labels.Selector) ([]*corev1alpha1.Shard, error)
	// listPartitions reads the Partitions of a logical cluster from the API
	// server.
	listPartitions  func(ctx context.Context, cluster logicalcluster.Name) ([]*topologyv1alpha1.Partition, error)
	createPartition func(ctx context.Context, cluster logicalcluster.Name, p *topologyv1alpha1.Partition) (*topologyv1alpha1.Partition, error)
	updatePartition func(ctx context.Context, cluster logicalcluster.Name, p *topologyv1alpha1.Partition) error
	// deletePartition deletes the Partition name if it still has uid.
	deletePartition func(ctx context.Context, cluster logicalcluster.Name, name string, uid types.UID) error
	// updateStatus writes the status of a PartitionSet.
	updateStatus func(ctx context.Context, cluster logicalcluster.Name, set *topologyv1alpha1.PartitionSet) error
}

func (r *setReconciler) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	set, err := r.getSet(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if set.DeletionTimestamp != nil {
		return reconciler.Result{}, nil
	}
	next := set.DeepCopy()
	syncErr := r.sync(ctx, key.Cluster, next)
	if apiequality.Semantic.DeepEqual(set.Status, next.Status) {
		return reconciler.Result{}, syncErr
	}
	err = r.updateStatus(ctx, key.Cluster, next)
	switch {
	case syncErr != nil:
		return reconciler.Result{}, syncErr
	case apierrors.IsNotFound(err):
		return reconciler.Result{}, nil
	case apierrors.IsConflict(err):
		klog.FromContext(ctx).V(4).Info("PartitionSet changed meanwhile, trying again", "err", err)
		return reconciler.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		return reconciler.Result{}, fmt.Errorf("updating status of PartitionSet: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Updated PartitionSet status", "count", next.Status.Count)
	return reconciler.Result{}, nil
}

// sync creates, updates and deletes the Partitions of set (a copy, in
// cluster) and sets its status. An invalid shard selector is reported in
// the status and not retried.
func (r *setReconciler) sync(ctx context.Context, cluster logicalcluster.Name, set *topologyv1alpha1.PartitionSet) error {
	selector := labels.Everything()
	var selectorLabels map[string]string
	if sel := set.Spec.ShardSelector; sel != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(sel); err != nil {
			conditionsv1alpha1.MarkFalse(set, topologyv1alpha1.PartitionSetValid, topologyv1alpha1.PartitionSetInvalidSelectorReason, conditionsv1alpha1.ConditionSeverityError, "%v", err)
			conditionsv1alpha1.MarkFalse(set, topologyv1alpha1.PartitionsReady, topologyv1alpha1.ErrorGeneratingPartitionsReason, conditionsv1alpha1.ConditionSeverityError, "")
			return nil
		}
		selectorLabels = sel.MatchLabels
	}
	conditionsv1alpha1.MarkTrue(set, topologyv1alpha1.PartitionSetValid)

	notReady := func(err error, format string, args ...any) error {
		conditionsv1alpha1.MarkFalse(set, topologyv1alpha1.PartitionsReady, topologyv1alpha1.ErrorGeneratingPartitionsReason, conditionsv1alpha1.ConditionSeverityError, format, args...)
		return err
	}
	shards, err := r.listShards(selector)
	if err != nil {
		return notReady(fmt.Errorf("listing shards: %w", err), "error listing Shards")
	}
	existing, err := r.listPartitions(ctx, cluster)
	if err != nil {
		return notReady(fmt.Errorf("listing partitions: %w", err), "error listing Partitions")
	}
	groups := groupShards(shards, dimensionsOf(set), selectorLabels)
	set.Status.Count = uint(len(groups))

	p := planPartitions(set, groups, existing)
	logger := klog.FromContext(ctx)
	var errs []error
	for _, part := range p.delete {
		err := r.deletePartition(ctx, cluster, part.Name, part.UID)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting partition %s: %w", part.Name, err))
			continue
		}
		logger.V(2).Info("Deleted Partition", "partition", klog.KObj(part))
	}
	for _, part := range p.update {
		if err := r.updatePartition(ctx, cluster, part); err != nil {
			errs = append(errs, fmt.Errorf("updating partition %s: %w", part.Name, err))
			continue
		}
		logger.V(2).Info("Updated Partition", "partition", klog.KObj(part))
	}
	for _, part := range p.create {
		created, err := r.createPartition(ctx, cluster, part)
		if err != nil {
			errs = append(errs, fmt.Errorf("creating partition %s*: %w", part.GenerateName, err))
			continue
		}
		logger.V(2).Info("Created Partition", "partition", klog.KObj(created))
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return notReady(err, "%v", err)
	}
	conditionsv1alpha1.MarkTrue(set, topologyv1alpha1.PartitionsReady)
	return nil
}
