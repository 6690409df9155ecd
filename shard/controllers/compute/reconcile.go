package compute

import (
	"context"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// reconcileSyncTarget keeps a SyncTarget's key label, virtual workspace
// URLs, synced resources and heartbeat conditions.
func (c *Controller) reconcileSyncTarget(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	obj, err := c.localSyncTargets.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	st, err := toSyncTarget(obj)
	if err != nil || st.DeletionTimestamp != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.Dynamic.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	stKey := workloadv1alpha1.ToSyncTargetKey(key.Cluster.String(), st.Name)
	if st.Labels[workloadv1alpha1.InternalSyncTargetKeyLabel] != stKey {
		if st.Labels == nil {
			st.Labels = map[string]string{}
		}
		st.Labels[workloadv1alpha1.InternalSyncTargetKeyLabel] = stKey
		u, err := toUnstructured(st)
		if err != nil {
			return reconciler.Result{}, err
		}
		// The update's event brings the SyncTarget back for its status.
		_, err = client.Resource(syncTargetsGVR).Update(ctx, u, metav1.UpdateOptions{})
		return reconciler.Result{}, ignoreConflict(err)
	}

	before := st.Status.DeepCopy()
	shards, err := c.cfg.Shards.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
	if err != nil {
		return reconciler.Result{}, err
	}
	var urls []workloadv1alpha1.VirtualWorkspace
	for _, sh := range shards {
		base := strings.TrimSuffix(sh.Spec.VirtualWorkspaceURL, "/")
		if base == "" {
			base = strings.TrimSuffix(sh.Spec.BaseURL, "/")
		}
		suffix := "/" + key.Cluster.String() + "/" + st.Name + "/" + string(st.UID)
		urls = append(urls, workloadv1alpha1.VirtualWorkspace{
			SyncerURL:   base + "/services/syncer" + suffix,
			UpsyncerURL: base + "/services/upsyncer" + suffix,
		})
	}
	st.Status.VirtualWorkspaces = urls
	st.Status.SyncedResources = c.syncedResources(key.Cluster, st)
	next := setHeartbeat(st, c.now(), c.cfg.HeartbeatThreshold)
	if !apiequality.Semantic.DeepEqual(before, &st.Status) {
		u, err := toUnstructured(st)
		if err != nil {
			return reconciler.Result{}, err
		}
		if _, err := client.Resource(syncTargetsGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			return reconciler.Result{}, ignoreConflict(err)
		}
	}
	return reconciler.Result{RequeueAfter: next}, nil
}

// reconcileLocation counts a Location's instances and shows its labels.
func (c *Controller) reconcileLocation(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	obj, err := c.localLocations.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	loc, err := toLocation(obj)
	if err != nil || loc.DeletionTimestamp != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.Dynamic.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	if want := labelsString(loc.Labels); loc.Annotations[schedulingv1alpha1.LocationLabelsStringAnnotationKey] != want {
		if loc.Annotations == nil {
			loc.Annotations = map[string]string{}
		}
		loc.Annotations[schedulingv1alpha1.LocationLabelsStringAnnotationKey] = want
		u, err := toUnstructured(loc)
		if err != nil {
			return reconciler.Result{}, err
		}
		_, err = client.Resource(locationsGVR).Update(ctx, u, metav1.UpdateOptions{})
		return reconciler.Result{}, ignoreConflict(err)
	}
	syncTargets, err := c.syncTargetsIn(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	instances := instancesOf(loc, syncTargets)
	now := c.now()
	var available uint32
	var next time.Duration
	for _, st := range instances {
		if isAvailable(st, now) {
			available++
			// An eviction time turns an instance unavailable by itself.
			if st.Spec.EvictAfter != nil {
				if d := st.Spec.EvictAfter.Sub(now) + time.Millisecond; next == 0 || d < next {
					next = d
				}
			}
		}
	}
	status := schedulingv1alpha1.LocationStatus{Instances: ptr.To(uint32(len(instances))), AvailableInstances: ptr.To(available)}
	if apiequality.Semantic.DeepEqual(status, loc.Status) {
		return reconciler.Result{RequeueAfter: next}, nil
	}
	loc.Status = status
	u, err := toUnstructured(loc)
	if err != nil {
		return reconciler.Result{}, err
	}
	_, err = client.Resource(locationsGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return reconciler.Result{RequeueAfter: next}, ignoreConflict(err)
}

// syncTargetsIn returns the SyncTargets of a cluster.
func (c *Controller) syncTargetsIn(cluster logicalcluster.Name) ([]*workloadv1alpha1.SyncTarget, error) {
	objs, err := c.syncTargets.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]*workloadv1alpha1.SyncTarget, 0, len(objs))
	for _, o := range objs {
		st, err := toSyncTarget(o)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// reconcilePlacement selects a Placement's Location and SyncTarget.
func (c *Controller) reconcilePlacement(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	obj, err := c.placements.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	p, err := toPlacement(obj)
	if err != nil || p.DeletionTimestamp != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.Dynamic.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}

	// 1. The Location, and the phase.
	before := p.Status.DeepCopy()
	locCluster, path, found := c.locationWorkspace(p)
	var locations []*schedulingv1alpha1.Location
	if found {
		objs, err := c.locations.Lister().Cluster(locCluster).List(labels.Everything())
		if err != nil {
			return reconciler.Result{}, err
		}
		for _, o := range objs {
			loc, err := toLocation(o)
			if err != nil {
				return reconciler.Result{}, err
			}
			locations = append(locations, loc)
		}
	}
	bound, err := c.namespaceBound(p)
	if err != nil {
		return reconciler.Result{}, err
	}
	selectLocation(p, path, found, locations, bound, c.pick)

	// 2. The SyncTarget of the selected Location.
	current := p.Annotations[SyncTargetPlacementAnnotationKey]
	scheduled, next, err := c.scheduleSyncTarget(p, locCluster, locations, current)
	if err != nil {
		return reconciler.Result{}, err
	}
	if scheduled != current {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		if scheduled == "" {
			delete(p.Annotations, SyncTargetPlacementAnnotationKey)
		} else {
			p.Annotations[SyncTargetPlacementAnnotationKey] = scheduled
		}
		status := p.Status
		u, err := toUnstructured(p)
		if err != nil {
			return reconciler.Result{}, err
		}
		updated, err := client.Resource(placementsGVR).Update(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			return reconciler.Result{}, ignoreConflict(err)
		}
		if p, err = toPlacement(updated); err != nil {
			return reconciler.Result{}, err
		}
		p.Status = status
	}
	if !apiequality.Semantic.DeepEqual(before, &p.Status) {
		u, err := toUnstructured(p)
		if err != nil {
			return reconciler.Result{}, err
		}
		if _, err := client.Resource(placementsGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			return reconciler.Result{}, ignoreConflict(err)
		}
	}
	return reconciler.Result{RequeueAfter: next}, nil
}

// namespaceBound tells whether a namespace of p's cluster that p selects
// carries the placement annotation.
func (c *Controller) namespaceBound(p *schedulingv1alpha1.Placement) (bool, error) {
	list, err := c.namespaces.Lister().Cluster(logicalcluster.From(p)).List(labels.Everything())
	if err != nil {
		return false, err
	}
	for _, ns := range list {
		if _, ok := ns.Annotations[schedulingv1alpha1.PlacementAnnotationKey]; ok && selectsNamespace(p, ns) {
			return true, nil
		}
	}
	return false, nil
}

// scheduleSyncTarget picks the SyncTarget of p's selected Location, sets
// the Scheduled condition, and returns the SyncTarget's key ("" for none)
// and when an eviction time makes it look again.
func (c *Controller) scheduleSyncTarget(p *schedulingv1alpha1.Placement, locCluster logicalcluster.Name, locations []*schedulingv1alpha1.Location, current string) (string, time.Duration, error) {
	notScheduled := func(reason, format string, args ...any) (string, time.Duration, error) {
		conditionsv1alpha1.MarkFalse(p, schedulingv1alpha1.PlacementScheduled, reason, conditionsv1alpha1.ConditionSeverityWarning, format, args...)
		return "", 0, nil
	}
	if p.Status.SelectedLocation == nil || p.Status.Phase == schedulingv1alpha1.PlacementPending {
		return notScheduled(schedulingv1alpha1.ScheduleLocationNotFound, "No selected location is scheduled")
	}
	var loc *schedulingv1alpha1.Location
	for _, l := range locations {
		if l.Name == p.Status.SelectedLocation.LocationName {
			loc = l
		}
	}
	if loc == nil {
		return notScheduled(schedulingv1alpha1.ScheduleLocationNotFound, "Selected location is not found")
	}
	syncTargets, err := c.syncTargetsIn(locCluster)
	if err != nil {
		return "", 0, err
	}
	instances := instancesOf(loc, syncTargets)
	if len(instances) == 0 {
		return notScheduled(schedulingv1alpha1.ScheduleNoValidTargetReason, "No SyncTarget in the selected Location")
	}
	bindings, err := c.computeBindings(logicalcluster.From(p))
	if err != nil {
		return "", 0, err
	}
	now := c.now()
	var candidates []*workloadv1alpha1.SyncTarget
	var unsupported []string
	var next time.Duration
	for _, st := range instances {
		if ok, binding := supportsBindings(st, bindings); !ok {
			unsupported = append(unsupported, "SyncTarget "+st.Name+" does not support APIBinding "+binding)
			continue
		}
		if isAvailable(st, now) {
			candidates = append(candidates, st)
			if st.Spec.EvictAfter != nil {
				if d := st.Spec.EvictAfter.Sub(now) + time.Millisecond; next == 0 || d < next {
					next = d
				}
			}
		}
	}
	if len(candidates) == 0 {
		if len(unsupported) == len(instances) {
			return notScheduled(schedulingv1alpha1.ScheduleNoValidTargetReason, "%s", strings.Join(unsupported, ", "))
		}
		return notScheduled(schedulingv1alpha1.ScheduleNoValidTargetReason, "No SyncTarget is ready or non evicting")
	}
	keyOf := func(st *workloadv1alpha1.SyncTarget) string {
		return workloadv1alpha1.ToSyncTargetKey(locCluster.String(), st.Name)
	}
	conditionsv1alpha1.MarkTrue(p, schedulingv1alpha1.PlacementScheduled)
	return scheduleSyncTarget(current, candidates, keyOf, c.pick), next, nil
}

// computeBindings returns the APIBindings of a cluster that bind a compute
// service's export (kcp's annotation, copied from the export).
func (c *Controller) computeBindings(cluster logicalcluster.Name) ([]*apisv1alpha1.APIBinding, error) {
	list, err := c.bindings.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*apisv1alpha1.APIBinding
	for _, b := range list {
		if _, ok := b.Annotations[workloadv1alpha1.ComputeAPIExportAnnotationKey]; ok {
			out = append(out, b)
		}
	}
	return out, nil
}

// reconcileNamespace keeps a namespace's placement annotation and state
// labels.
func (c *Controller) reconcileNamespace(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	ns, err := c.namespaces.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	objs, err := c.placements.Lister().Cluster(key.Cluster).List(labels.Everything())
	if err != nil {
		return reconciler.Result{}, err
	}
	placements := make([]*schedulingv1alpha1.Placement, 0, len(objs))
	for _, o := range objs {
		p, err := toPlacement(o)
		if err != nil {
			return reconciler.Result{}, err
		}
		placements = append(placements, p)
	}
	ns = ns.DeepCopy()
	changed, next := scheduleNamespace(ns, placements, c.now())
	if !changed {
		return reconciler.Result{RequeueAfter: next}, nil
	}
	client, err := c.cfg.Kube.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	_, err = client.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	return reconciler.Result{RequeueAfter: next}, ignoreConflict(err)
}

// ignoreConflict drops a conflict: the newer object's event brings the
// key back.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
