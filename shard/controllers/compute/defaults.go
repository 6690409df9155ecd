package compute

import (
	"context"

	"k8s.io/client-go/tools/cache"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// DefaultName names the default Location of a workspace with SyncTargets
// and the default Placement of a workspace with a compute binding.
const DefaultName = "default"

// syncTargetResource is what default Locations and Placements select.
var syncTargetResource = schedulingv1alpha1.GroupVersionResource{
	Group: schedulingv1alpha1.WorkloadGroup, Version: schedulingv1alpha1.WorkloadVersion, Resource: schedulingv1alpha1.SyncTargetsResource,
}

// reconcileDefaultLocation gives a workspace with SyncTargets the Location
// "default" of all of them when it has none of that name, as kcp does (key:
// the cluster). A workspace that does not serve Locations (no binding to
// root:scheduling.kcp.io) gets none until it does.
func (c *Controller) reconcileDefaultLocation(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	sts, err := c.localSyncTargets.Lister().Cluster(key.Cluster).List(labels.Everything())
	if err != nil || len(sts) == 0 || !c.servesPlacements(key.Cluster) {
		return reconciler.Result{}, err
	}
	if _, err := c.localLocations.Lister().Cluster(key.Cluster).Get(DefaultName); !apierrors.IsNotFound(err) {
		return reconciler.Result{}, err
	}
	loc := &schedulingv1alpha1.Location{
		TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1alpha1.SchemeGroupVersion.String(), Kind: "Location"},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultName},
		Spec:       schedulingv1alpha1.LocationSpec{Resource: syncTargetResource, InstanceSelector: &metav1.LabelSelector{}},
	}
	u, err := toUnstructured(loc)
	if err != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.Dynamic.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	_, err = client.Resource(locationsGVR).Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	return reconciler.Result{}, err
}

// reconcileDefaultPlacement gives a workspace whose compute binding is
// bound the Placement "default" of all its namespaces onto any Location of
// the export's workspace, then marks the binding with
// workload.kcp.io/skip-default-object-creation so that a user who deletes
// the Placement keeps it deleted (key: the binding). A workspace that does
// not serve Placements (no binding to root:scheduling.kcp.io) gets none
// until it does.
func (c *Controller) reconcileDefaultPlacement(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	b, err := c.bindings.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if !needsDefaultPlacement(b) || !c.servesPlacements(key.Cluster) {
		return reconciler.Result{}, nil
	}
	path := b.Spec.Reference.Export.Path
	if path == "" {
		path = key.Cluster.String()
	}
	p := &schedulingv1alpha1.Placement{
		TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1alpha1.SchemeGroupVersion.String(), Kind: "Placement"},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultName},
		Spec: schedulingv1alpha1.PlacementSpec{
			LocationWorkspace: path,
			LocationResource:  syncTargetResource,
			LocationSelectors: []metav1.LabelSelector{{}},
			NamespaceSelector: &metav1.LabelSelector{},
		},
	}
	u, err := toUnstructured(p)
	if err != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.Dynamic.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	if _, err := client.Resource(placementsGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconciler.Result{}, err
	}
	kcp, err := c.cfg.KCP.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	b = b.DeepCopy()
	if b.Annotations == nil {
		b.Annotations = map[string]string{}
	}
	b.Annotations[workloadv1alpha1.AnnotationSkipDefaultObjectCreation] = "true"
	_, err = kcp.APIBindings().Update(ctx, b, metav1.UpdateOptions{})
	return reconciler.Result{}, ignoreConflict(err)
}

// needsDefaultPlacement tells whether b is a bound compute binding that
// has not had its default Placement yet.
func needsDefaultPlacement(b *apisv1alpha1.APIBinding) bool {
	_, compute := b.Annotations[workloadv1alpha1.ComputeAPIExportAnnotationKey]
	_, skip := b.Annotations[workloadv1alpha1.AnnotationSkipDefaultObjectCreation]
	return compute && !skip && b.DeletionTimestamp == nil && b.Status.Phase == apisv1alpha1.APIBindingPhaseBound && b.Spec.Reference.Export != nil
}

// servesPlacements tells whether a cluster binds root's scheduling.kcp.io
// (Locations and Placements).
func (c *Controller) servesPlacements(cluster logicalcluster.Name) bool {
	list, err := c.bindings.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, b := range list {
		if b.Status.Phase == apisv1alpha1.APIBindingPhaseBound && b.Status.APIExportClusterName == logicalcluster.Root.String() &&
			b.Spec.Reference.Export != nil && b.Spec.Reference.Export.Name == schedulingExport {
			return true
		}
	}
	return false
}

// needsDefaultPlacementEvent tells whether a binding event may need a
// default Placement: a compute binding without the skip annotation.
func needsDefaultPlacementEvent(obj any) bool {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	b, ok := obj.(*apisv1alpha1.APIBinding)
	return ok && needsDefaultPlacement(b)
}

// computeBindingsOf returns, for a binding to scheduling.kcp.io, the
// compute bindings of its cluster that still need a default Placement.
func (c *Controller) computeBindingsOf(obj any) []reconciler.Key {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok || b.Spec.Reference.Export == nil || b.Spec.Reference.Export.Name != schedulingExport {
		return nil
	}
	cluster := logicalcluster.From(b)
	list, err := c.bindings.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []reconciler.Key
	for _, other := range list {
		if needsDefaultPlacement(other) {
			keys = append(keys, reconciler.Key{Cluster: cluster, Name: other.Name})
		}
	}
	return keys
}
