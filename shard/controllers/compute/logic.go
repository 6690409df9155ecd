package compute

import (
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
)

// DefaultHeartbeatThreshold is how old a syncer's last heartbeat may be
// before its SyncTarget is not Ready (kcp's default).
const DefaultHeartbeatThreshold = time.Minute

// removingGracePeriod is how long a namespace keeps the state label of a
// SyncTarget it is no longer scheduled to, after the deletion annotation
// (kcp's).
const removingGracePeriod = 5 * time.Second

// SyncTargetPlacementAnnotationKey on a Placement is the key of the
// SyncTarget the Placement scheduled.
const SyncTargetPlacementAnnotationKey = "internal.workload.kcp.io/synctarget"

// setHeartbeat sets HeartbeatHealthy and Ready of st from its last
// heartbeat, and returns when the heartbeat goes stale (zero if it is
// already).
func setHeartbeat(st *workloadv1alpha1.SyncTarget, now time.Time, threshold time.Duration) time.Duration {
	var next time.Duration
	switch hb := st.Status.LastSyncerHeartbeatTime; {
	case hb == nil:
		conditionsv1alpha1.MarkFalse(st, workloadv1alpha1.HeartbeatHealthy, workloadv1alpha1.ErrorHeartbeatMissedReason, conditionsv1alpha1.ConditionSeverityError, "No heartbeat yet seen")
	case now.Sub(hb.Time) > threshold:
		conditionsv1alpha1.MarkFalse(st, workloadv1alpha1.HeartbeatHealthy, workloadv1alpha1.ErrorHeartbeatMissedReason, conditionsv1alpha1.ConditionSeverityError, "No heartbeat since %s", hb.UTC().Format(time.RFC3339))
	default:
		conditionsv1alpha1.MarkTrue(st, workloadv1alpha1.HeartbeatHealthy)
		next = hb.Add(threshold).Sub(now) + time.Millisecond
	}
	setSummary(st)
	return next
}

// setSummary sets Ready: True when every other condition is True, else
// False with the reason and message of the first (by type) that is not.
func setSummary(st *workloadv1alpha1.SyncTarget) {
	others := slices.DeleteFunc(slices.Clone(st.Status.Conditions), func(c conditionsv1alpha1.Condition) bool {
		return c.Type == conditionsv1alpha1.ReadyCondition
	})
	sort.Slice(others, func(i, j int) bool { return others[i].Type < others[j].Type })
	for _, c := range others {
		if c.Status != corev1.ConditionTrue {
			sev := c.Severity
			if sev == "" {
				sev = conditionsv1alpha1.ConditionSeverityError
			}
			conditionsv1alpha1.MarkFalse(st, conditionsv1alpha1.ReadyCondition, c.Reason, sev, "%s", c.Message)
			return
		}
	}
	conditionsv1alpha1.MarkTrue(st, conditionsv1alpha1.ReadyCondition)
}

// isAvailable tells whether st may take new workloads: Ready, schedulable
// and not past its evictAfter.
func isAvailable(st *workloadv1alpha1.SyncTarget, now time.Time) bool {
	return conditionsv1alpha1.IsTrue(st, conditionsv1alpha1.ReadyCondition) && !st.Spec.Unschedulable &&
		(st.Spec.EvictAfter == nil || now.Before(st.Spec.EvictAfter.Time))
}

// instancesOf returns the SyncTargets of loc's cluster that loc selects.
func instancesOf(loc *schedulingv1alpha1.Location, syncTargets []*workloadv1alpha1.SyncTarget) []*workloadv1alpha1.SyncTarget {
	if loc.Spec.InstanceSelector == nil || !isSyncTargetResource(loc.Spec.Resource) {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(loc.Spec.InstanceSelector)
	if err != nil {
		return nil
	}
	var out []*workloadv1alpha1.SyncTarget
	for _, st := range syncTargets {
		if st.DeletionTimestamp == nil && sel.Matches(labels.Set(st.Labels)) {
			out = append(out, st)
		}
	}
	return out
}

func isSyncTargetResource(r schedulingv1alpha1.GroupVersionResource) bool {
	return r.Group == schedulingv1alpha1.WorkloadGroup && r.Version == schedulingv1alpha1.WorkloadVersion && r.Resource == schedulingv1alpha1.SyncTargetsResource
}

// labelsString is the scheduling.kcp.io/labels annotation of a Location:
// its labels as key=value, sorted, space-separated.
func labelsString(l map[string]string) string {
	keys := slices.Sorted(maps.Keys(l))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, " ")
}

// matchingLocations returns the names of the Locations (of one workspace)
// of p's locationResource that one of p's locationSelectors selects.
func matchingLocations(p *schedulingv1alpha1.Placement, locations []*schedulingv1alpha1.Location) []string {
	var out []string
	for _, loc := range locations {
		if loc.DeletionTimestamp != nil || loc.Spec.Resource != p.Spec.LocationResource {
			continue
		}
		for i := range p.Spec.LocationSelectors {
			sel, err := metav1.LabelSelectorAsSelector(&p.Spec.LocationSelectors[i])
			if err == nil && sel.Matches(labels.Set(loc.Labels)) {
				out = append(out, loc.Name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// selectLocation brings p's phase, selected Location and Ready condition
// up to date with the Locations of its location workspace (path, found
// tells whether the workspace is known) and with whether a namespace is
// bound to it.
func selectLocation(p *schedulingv1alpha1.Placement, path string, found bool, locations []*schedulingv1alpha1.Location, namespaceBound bool, pick func(int) int) {
	if !found {
		p.Status.Phase = schedulingv1alpha1.PlacementPending
		p.Status.SelectedLocation = nil
		conditionsv1alpha1.MarkFalse(p, schedulingv1alpha1.PlacementReady, schedulingv1alpha1.LocationNotFoundReason, conditionsv1alpha1.ConditionSeverityError, "workspace %q of the locations is not found", path)
		return
	}
	valid := matchingLocations(p, locations)
	selectedValid := p.Status.SelectedLocation != nil && p.Status.SelectedLocation.Path == path && slices.Contains(valid, p.Status.SelectedLocation.LocationName)
	switch {
	case p.Status.Phase == schedulingv1alpha1.PlacementBound && p.Status.SelectedLocation != nil && !selectedValid:
		// Workloads run there: a Bound Placement does not move by itself.
		conditionsv1alpha1.MarkFalse(p, schedulingv1alpha1.PlacementReady, schedulingv1alpha1.LocationInvalidReason, conditionsv1alpha1.ConditionSeverityError, "Selected location is invalid for current placement")
		return
	case selectedValid:
	case len(valid) == 0:
		p.Status.Phase = schedulingv1alpha1.PlacementPending
		p.Status.SelectedLocation = nil
		conditionsv1alpha1.MarkFalse(p, schedulingv1alpha1.PlacementReady, schedulingv1alpha1.LocationNotMatchReason, conditionsv1alpha1.ConditionSeverityError, "No valid location is found")
		return
	default:
		p.Status.SelectedLocation = &schedulingv1alpha1.LocationReference{Path: path, LocationName: valid[pick(len(valid))]}
	}
	conditionsv1alpha1.MarkTrue(p, schedulingv1alpha1.PlacementReady)
	if namespaceBound {
		p.Status.Phase = schedulingv1alpha1.PlacementBound
	} else {
		p.Status.Phase = schedulingv1alpha1.PlacementUnbound
	}
}

// selectsNamespace tells whether p's namespaceSelector selects ns (none
// without a selector).
func selectsNamespace(p *schedulingv1alpha1.Placement, ns *corev1.Namespace) bool {
	if p.Spec.NamespaceSelector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(p.Spec.NamespaceSelector)
	return err == nil && sel.Matches(labels.Set(ns.Labels))
}

// isValidFor tells whether p places ns: p has a Location, is not Ready
// False, and selects ns.
func isValidFor(p *schedulingv1alpha1.Placement, ns *corev1.Namespace) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != "" && p.Status.Phase != schedulingv1alpha1.PlacementPending &&
		!conditionsv1alpha1.IsFalse(p, schedulingv1alpha1.PlacementReady) && selectsNamespace(p, ns)
}

// supportsBindings tells whether st can run the resources that the
// compute bindings bind, and names the first it cannot.
func supportsBindings(st *workloadv1alpha1.SyncTarget, bindings []*apisv1alpha1.APIBinding) (bool, string) {
	accepted := map[apisv1alpha1.GroupResource]string{}
	for _, r := range st.Status.SyncedResources {
		if r.State == workloadv1alpha1.ResourceSchemaAcceptedState {
			accepted[r.GroupResource] = r.IdentityHash
		}
	}
	for _, b := range bindings {
		for _, r := range b.Status.BoundResources {
			if id, ok := accepted[apisv1alpha1.GroupResource{Group: r.Group, Resource: r.Resource}]; !ok || id != r.Schema.IdentityHash {
				return false, b.Name
			}
		}
	}
	return true, ""
}

// scheduleSyncTarget returns the key of the SyncTarget p should run on,
// keeping current (a key) while it is still a candidate; "" with the
// Scheduled condition's reason and message when there is none.
func scheduleSyncTarget(current string, candidates []*workloadv1alpha1.SyncTarget, keyOf func(*workloadv1alpha1.SyncTarget) string, pick func(int) int) string {
	if len(candidates) == 0 {
		return ""
	}
	for _, st := range candidates {
		if keyOf(st) == current {
			return current
		}
	}
	sort.Slice(candidates, func(i, j int) bool { return keyOf(candidates[i]) < keyOf(candidates[j]) })
	return keyOf(candidates[pick(len(candidates))])
}

// scheduleNamespace brings ns's placement annotation and state labels in
// line with the Placements of its cluster. It returns whether ns changed
// and, when a removal is pending, after how long to look again.
func scheduleNamespace(ns *corev1.Namespace, placements []*schedulingv1alpha1.Placement, now time.Time) (bool, time.Duration) {
	scheduled := map[string]bool{}
	placed := false
	for _, p := range placements {
		if !isValidFor(p, ns) {
			continue
		}
		placed = true
		if key := p.Annotations[SyncTargetPlacementAnnotationKey]; key != "" {
			scheduled[key] = true
		}
	}
	changed := false
	_, annotated := ns.Annotations[schedulingv1alpha1.PlacementAnnotationKey]
	switch {
	case placed && !annotated:
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[schedulingv1alpha1.PlacementAnnotationKey] = ""
		changed = true
	case !placed && annotated:
		delete(ns.Annotations, schedulingv1alpha1.PlacementAnnotationKey)
		changed = true
	}

	var requeue time.Duration
	current := map[string]bool{}
	for k := range ns.Labels {
		key, ok := strings.CutPrefix(k, workloadv1alpha1.ClusterResourceStateLabelPrefix)
		if !ok {
			continue
		}
		current[key] = true
		deletionKey := workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix + key
		if v, removing := ns.Annotations[deletionKey]; removing {
			since, err := time.Parse(time.RFC3339, v)
			if err != nil || !now.Before(since.Add(removingGracePeriod)) {
				delete(ns.Labels, k)
				delete(ns.Annotations, deletionKey)
				changed = true
			} else if d := since.Add(removingGracePeriod).Sub(now); requeue == 0 || d < requeue {
				requeue = d
			}
			continue
		}
		if !scheduled[key] {
			if ns.Annotations == nil {
				ns.Annotations = map[string]string{}
			}
			ns.Annotations[deletionKey] = now.UTC().Format(time.RFC3339)
			changed = true
			if requeue == 0 || removingGracePeriod < requeue {
				requeue = removingGracePeriod
			}
		}
	}
	for key := range scheduled {
		if current[key] {
			continue
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[workloadv1alpha1.ClusterResourceStateLabelPrefix+key] = string(workloadv1alpha1.ResourceStateSync)
		changed = true
	}
	return changed, requeue
}

// randomPick picks an index below n at random, as kcp does.
func randomPick(n int) int { return rand.IntN(n) }
