// Package orphanlogicalclusters deletes the logical clusters of a shard
// whose owning Workspace is gone: a Workspace admitted just as its parent
// started deleting can be removed with the parent's content after the
// workspace controller created its LogicalCluster, and nothing else would
// ever delete that cluster.
//
// Every LogicalCluster whose spec.owner is a Workspace is checked when it
// is added, and all of them again every sweep interval (a shard-wide
// ticker, not one per cluster). A cluster is deleted, through the API so
// that its content is deleted with finalizers honoured, only on the word
// of the owner's shard: the owner's logical cluster does not exist, or
// exists without a Workspace of that name and UID. An owner this shard
// cannot judge (a logical cluster on another shard) is left alone.
package orphanlogicalclusters

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "orphan-logicalclusters"

// DefaultSweepInterval is how often every owned LogicalCluster is checked.
const DefaultSweepInterval = 5 * time.Minute

// OwnerState is what the owner's shard says of a LogicalCluster's owner.
type OwnerState int

const (
	// OwnerExists: the owner exists with the UID the owner reference has.
	OwnerExists OwnerState = iota
	// OwnerGone: the owner's logical cluster, or the owner in it, does not
	// exist, or has another UID.
	OwnerGone
	// OwnerUnknown: this shard cannot tell.
	OwnerUnknown
)

// Config are the dependencies of the controller.
type Config struct {
	// LogicalClusters is the shard's informer of LogicalClusters.
	LogicalClusters informers.Informer[*corev1alpha1.LogicalCluster]
	// Owner tells the state of the owner of a LogicalCluster (spec.owner),
	// asking its shard.
	Owner func(ctx context.Context, lc *corev1alpha1.LogicalCluster) (OwnerState, error)
	// Delete deletes the LogicalCluster of cluster if it still has uid.
	Delete func(ctx context.Context, cluster logicalcluster.Name, uid types.UID) error
	// SweepInterval defaults to DefaultSweepInterval.
	SweepInterval time.Duration
}

// Controller deletes orphaned logical clusters.
type Controller struct {
	cfg        Config
	controller *reconciler.Controller
}

// New returns the controller; the informer must start after it.
func New(cfg Config) (*Controller, error) {
	if cfg.Owner == nil || cfg.Delete == nil {
		return nil, fmt.Errorf("%s: Owner and Delete are required", ControllerName)
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = DefaultSweepInterval
	}
	c := &Controller{cfg: cfg}
	c.controller = reconciler.New(ControllerName, reconciler.Func(c.reconcile), reconciler.Options{Workers: 2})
	if err := c.controller.Watch(cfg.LogicalClusters.Informer(), cache.FilteringResourceEventHandler{
		FilterFunc: owned,
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			c.controller.Enqueue(keyOf(obj.(*corev1alpha1.LogicalCluster)))
		}},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns ControllerName.
func (c *Controller) Name() string { return ControllerName }

// Run checks logical clusters until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	go func() {
		ticker := time.NewTicker(c.cfg.SweepInterval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				all, err := c.cfg.LogicalClusters.Lister().List(labels.Everything())
				if err != nil {
					continue
				}
				for _, u := range all {
					if owned(u) {
						c.controller.Enqueue(keyOf(u))
					}
				}
			}
		}
	}()
	return c.controller.Run(ctx)
}

func keyOf(lc *corev1alpha1.LogicalCluster) reconciler.Key {
	return reconciler.Key{Cluster: logicalcluster.From(lc), Name: lc.Name}
}

// owned tells whether obj is a LogicalCluster, not being deleted, owned by
// a Workspace.
func owned(obj any) bool {
	lc, ok := obj.(*corev1alpha1.LogicalCluster)
	if !ok || lc.Name != corev1alpha1.LogicalClusterName || lc.DeletionTimestamp != nil {
		return false
	}
	return lc.Spec.Owner != nil && lc.Spec.Owner.Resource == "workspaces"
}

// reconcile deletes the LogicalCluster of key.Cluster if its owner is gone.
func (c *Controller) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	lc, err := c.cfg.LogicalClusters.Lister().Cluster(key.Cluster).Get(corev1alpha1.LogicalClusterName)
	if err != nil || !owned(lc) {
		return reconciler.Result{}, nil
	}
	state, err := c.cfg.Owner(ctx, lc)
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("looking up the owner of logical cluster %s: %w", key.Cluster, err)
	}
	if state != OwnerGone {
		return reconciler.Result{}, nil
	}
	if err := c.cfg.Delete(ctx, key.Cluster, lc.UID); err != nil {
		return reconciler.Result{}, fmt.Errorf("deleting orphaned logical cluster %s: %w", key.Cluster, err)
	}
	o := lc.Spec.Owner
	klog.FromContext(ctx).Info("Deleted a logical cluster whose owner is gone", "cluster", key.Cluster,
		"owner", klog.KRef(o.Cluster, o.Name), "ownerUID", o.UID, "created", lc.CreationTimestamp.Format(time.RFC3339))
	return reconciler.Result{}, nil
}
