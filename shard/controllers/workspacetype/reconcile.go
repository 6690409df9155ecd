package workspacetype

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// InitializingWorkspacesPath is the path of the initializing-workspaces
// virtual workspace on a shard's virtual workspace server; the initializer
// follows it.
const InitializingWorkspacesPath = "/services/initializingworkspaces/"

// NoShardsReason is the reason of Ready=False while there is no Shard.
const NoShardsReason = "NoShards"

// conflictRetry is how long to wait for the informer after a write
// conflict.
const conflictRetry = time.Second

// statusReconciler writes the status of WorkspaceTypes. Its dependencies
// are plain functions, so it is tested without an API server.
type statusReconciler struct {
	// getType reads a WorkspaceType from the informer cache.
	getType func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.WorkspaceType, error)
	// listShards returns the Shards of the installation.
	listShards func() ([]*corev1alpha1.Shard, error)
	// updateStatus writes the status of a WorkspaceType.
	updateStatus func(ctx context.Context, cluster logicalcluster.Name, wt *tenancyv1alpha1.WorkspaceType) error
}

func (r *statusReconciler) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	wt, err := r.getType(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	shards, err := r.listShards()
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("listing shards: %w", err)
	}
	next := wt.DeepCopy()
	setStatus(next, key.Cluster, shards)
	if apiequality.Semantic.DeepEqual(wt.Status, next.Status) {
		return reconciler.Result{}, nil
	}
	err = r.updateStatus(ctx, key.Cluster, next)
	switch {
	case apierrors.IsNotFound(err):
		return reconciler.Result{}, nil
	case apierrors.IsConflict(err):
		klog.FromContext(ctx).V(4).Info("WorkspaceType changed meanwhile, trying again", "err", err)
		return reconciler.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		return reconciler.Result{}, fmt.Errorf("updating status of WorkspaceType: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Updated WorkspaceType status", "virtualWorkspaces", len(next.Status.VirtualWorkspaces))
	return reconciler.Result{}, nil
}

// setStatus sets the virtual workspace URLs and the Ready condition of wt,
// a type in the logical cluster cluster.
func setStatus(wt *tenancyv1alpha1.WorkspaceType, cluster logicalcluster.Name, shards []*corev1alpha1.Shard) {
	wt.Status.VirtualWorkspaces = virtualWorkspaces(tenancyv1alpha1.InitializerFor(cluster.String(), tenancyv1alpha1.WorkspaceTypeName(wt.Name)), shards)
	if len(shards) == 0 {
		conditionsv1alpha1.MarkFalse(wt, tenancyv1alpha1.WorkspaceTypeReady, NoShardsReason, conditionsv1alpha1.ConditionSeverityWarning,
			"there are no shards to serve the initializing workspaces of this type")
		return
	}
	conditionsv1alpha1.MarkTrue(wt, tenancyv1alpha1.WorkspaceTypeReady)
}

// virtualWorkspaces returns the sorted, distinct URLs of the
// initializing-workspaces virtual workspace of initializer on shards.
func virtualWorkspaces(initializer corev1alpha1.LogicalClusterInitializer, shards []*corev1alpha1.Shard) []tenancyv1alpha1.VirtualWorkspace {
	urls := make([]string, 0, len(shards))
	for _, s := range shards {
		base := s.Spec.VirtualWorkspaceURL
		if base == "" {
			base = s.Spec.BaseURL
		}
		if base == "" {
			continue
		}
		urls = append(urls, strings.TrimRight(base, "/")+InitializingWorkspacesPath+string(initializer))
	}
	slices.Sort(urls)
	urls = slices.Compact(urls)
	if len(urls) == 0 {
		return nil
	}
	out := make([]tenancyv1alpha1.VirtualWorkspace, len(urls))
	for i, u := range urls {
		out[i] = tenancyv1alpha1.VirtualWorkspace{URL: u}
	}
	return out
}
