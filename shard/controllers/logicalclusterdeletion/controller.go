package logicalclusterdeletion

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "logicalcluster-deletion"

// workers is the number of logical clusters deleted in parallel.
const workers = 8

// logicalClusters is the resource of LogicalCluster objects.
var logicalClusters = corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters")

// Controller deletes the content of deleted logical clusters of a shard.
type Controller struct {
	controller *reconciler.Controller
}

// New returns the controller for all logical clusters of the shard that
// loopback addresses. It watches LogicalClusters through f's informer of
// core.kcp.io/v1alpha1 logicalclusters, which f must start after
// New, writes them through a client built from loopback, and removes the
// content of a deleted logical cluster with deleteClusterData.
func New(loopback *rest.Config, f *informers.SharedInformerFactory, deleteClusterData DeleteClusterDataFunc) (*Controller, error) {
	if loopback == nil || f == nil || deleteClusterData == nil {
		return nil, fmt.Errorf("%s: loopback config, informer factory and DeleteClusterData are required", ControllerName)
	}
	client, err := clusters.NewDynamicForConfig(loopback)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ControllerName, err)
	}
	lcs := f.LogicalClusters()
	d := &deleter{
		getLogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			return lcs.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
		},
		deleteClusterData: deleteClusterData,
		writeStatus: func(ctx context.Context, cluster logicalcluster.Name, old, new *corev1alpha1.LogicalCluster) (*corev1alpha1.LogicalCluster, error) {
			patch, err := statusPatch(old, new)
			if err != nil || patch == nil {
				return old, err
			}
			u, err := patchLogicalCluster(ctx, client, cluster, patch, "status")
			if err != nil {
				return nil, fmt.Errorf("patching status of LogicalCluster: %w", err)
			}
			return fromUnstructured(u)
		},
		writeFinalizers: func(ctx context.Context, cluster logicalcluster.Name, old, new *corev1alpha1.LogicalCluster) error {
			patch, err := finalizersPatch(old, new)
			if err != nil || patch == nil {
				return err
			}
			if _, err := patchLogicalCluster(ctx, client, cluster, patch); err != nil {
				return fmt.Errorf("patching finalizers of LogicalCluster: %w", err)
			}
			return nil
		},
	}
	c := reconciler.New(ControllerName, reconciler.Func(d.reconcile), reconciler.Options{Workers: workers})
	handler := cache.FilteringResourceEventHandler{
		FilterFunc: deleting,
		Handler:    c.EnqueueHandler(),
	}
	if err := c.Watch(lcs.Informer(), handler); err != nil {
		return nil, err
	}
	// A deleting logical cluster waits for its child workspaces: the
	// deletion of the last one is the moment to go on.
	parentOf := func(obj metav1.Object) []reconciler.Key {
		return []reconciler.Key{{Cluster: logicalcluster.From(obj), Name: corev1alpha1.LogicalClusterName}}
	}
	if err := c.Watch(f.Workspaces().Informer(), cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if m, ok := obj.(metav1.Object); ok {
				for _, k := range parentOf(m) {
					c.Enqueue(k)
				}
			}
		},
	}); err != nil {
		return nil, err
	}
	return &Controller{controller: c}, nil
}

// Name returns ControllerName.
func (c *Controller) Name() string { return c.controller.Name() }

// Run deletes logical clusters until ctx is done. It fails if the
// controller has already run.
func (c *Controller) Run(ctx context.Context) error {
	return c.controller.Run(ctx)
}

// deleting tells whether obj is a LogicalCluster named "cluster" that is
// being deleted and still has Finalizer.
func deleting(obj any) bool {
	lc, ok := obj.(*corev1alpha1.LogicalCluster)
	return ok && lc.Name == corev1alpha1.LogicalClusterName && lc.DeletionTimestamp != nil && slices.Contains(lc.Finalizers, Finalizer)
}

// patchLogicalCluster sends a JSON merge patch for the LogicalCluster of
// cluster.
func patchLogicalCluster(ctx context.Context, client *clusters.DynamicClusterClient, cluster logicalcluster.Name, patch []byte, subresources ...string) (*unstructured.Unstructured, error) {
	c, err := client.For(cluster)
	if err != nil {
		return nil, err
	}
	return c.Resource(logicalClusters).Patch(ctx, corev1alpha1.LogicalClusterName, types.MergePatchType, patch, metav1.PatchOptions{}, subresources...)
}

// fromUnstructured converts a LogicalCluster from the unstructured
// informer or client into a new typed object.
func fromUnstructured(u *unstructured.Unstructured) (*corev1alpha1.LogicalCluster, error) {
	lc := &corev1alpha1.LogicalCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, lc); err != nil {
		return nil, fmt.Errorf("decoding LogicalCluster %s: %w", u.GetName(), err)
	}
	return lc, nil
}
