package compute

import (
	"context"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// PlacementState is what of a namespace its objects follow, from its
// labels and annotations: its state labels and deletion times.
func PlacementState(lbls, ann map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range lbls {
		if strings.HasPrefix(k, workloadv1alpha1.ClusterResourceStateLabelPrefix) {
			out["l:"+k] = v
		}
	}
	for k, v := range ann {
		if strings.HasPrefix(k, workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix) {
			out["a:"+k] = v
		}
	}
	return out
}

func placementState(ns *corev1.Namespace) map[string]string {
	return PlacementState(ns.Labels, ns.Annotations)
}

// HasStateLabels tells whether lbls hold a state.workload.kcp.io/ label.
func HasStateLabels(lbls map[string]string) bool { return len(stateKeys(lbls)) > 0 }

// namespaceStateHandler enqueues a namespace whose placement state changed.
func namespaceStateHandler(ctrl *reconciler.Controller) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if ns, ok := obj.(*corev1.Namespace); ok && len(placementState(ns)) > 0 {
				ctrl.EnqueueObject(ns)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Namespace)
			n, ok2 := newObj.(*corev1.Namespace)
			if ok1 && ok2 && !maps.Equal(placementState(o), placementState(n)) {
				ctrl.EnqueueObject(n)
			}
		},
	}
}

// placedNamespacesOf returns the placed namespaces of a binding's cluster,
// when the binding is a compute binding: what it binds may have changed.
func (c *Controller) placedNamespacesOf(obj any) []reconciler.Key {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok {
		return nil
	}
	if _, compute := b.Annotations[workloadv1alpha1.ComputeAPIExportAnnotationKey]; !compute {
		return nil
	}
	cluster := logicalcluster.From(b)
	list, err := c.namespaces.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []reconciler.Key
	for _, ns := range list {
		if len(placementState(ns)) > 0 {
			keys = append(keys, reconciler.Key{Cluster: cluster, Name: ns.Name})
		}
	}
	return keys
}

// reconcileResources brings the synced objects of a namespace in line with
// its placement; objects written later get it in admission.
func (c *Controller) reconcileResources(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	ns, err := c.namespaces.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	bindings, err := c.bindings.Lister().Cluster(key.Cluster).List(labels.Everything())
	if err != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.Dynamic.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	now := c.now()
	for _, gvr := range SyncedResources(bindings) {
		list, err := client.Resource(gvr).Namespace(ns.Name).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			// Not served (yet) in this cluster.
			continue
		}
		if err != nil {
			return reconciler.Result{}, err
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if !ApplyNamespaceState(obj, ns, now) {
				continue
			}
			_, err := client.Resource(gvr).Namespace(ns.Name).Update(ctx, obj, metav1.UpdateOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				// A conflict is retried with the whole namespace.
				return reconciler.Result{}, err
			}
		}
	}
	return reconciler.Result{}, nil
}
