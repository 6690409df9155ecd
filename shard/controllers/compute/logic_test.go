package compute

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
)

var (
	t0         = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	stResource = schedulingv1alpha1.GroupVersionResource{Group: schedulingv1alpha1.WorkloadGroup, Version: schedulingv1alpha1.WorkloadVersion, Resource: schedulingv1alpha1.SyncTargetsResource}
	first      = func(int) int { return 0 }
)

func syncTarget(name string, heartbeat *time.Time, lbls map[string]string) *workloadv1alpha1.SyncTarget {
	st := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
	if heartbeat != nil {
		st.Status.LastSyncerHeartbeatTime = &metav1.Time{Time: *heartbeat}
	}
	return st
}

func TestHeartbeat(t *testing.T) {
	st := syncTarget("a", nil, nil)
	if next := setHeartbeat(st, t0, time.Minute); next != 0 || conditionsv1alpha1.IsTrue(st, conditionsv1alpha1.ReadyCondition) {
		t.Errorf("no heartbeat: next %v, conditions %+v", next, st.Status.Conditions)
	}
	if conditionsv1alpha1.GetReason(st, workloadv1alpha1.HeartbeatHealthy) != workloadv1alpha1.ErrorHeartbeatMissedReason {
		t.Errorf("HeartbeatHealthy without a heartbeat: %+v", st.Status.Conditions)
	}
	hb := t0.Add(-10 * time.Second)
	st.Status.LastSyncerHeartbeatTime = &metav1.Time{Time: hb}
	next := setHeartbeat(st, t0, time.Minute)
	if !conditionsv1alpha1.IsTrue(st, conditionsv1alpha1.ReadyCondition) || next < 50*time.Second || next > 51*time.Second {
		t.Errorf("a fresh heartbeat: next %v, conditions %+v", next, st.Status.Conditions)
	}
	// The syncer reports a condition of its own: Ready follows it.
	conditionsv1alpha1.MarkFalse(st, workloadv1alpha1.SyncerAuthorized, "Forbidden", conditionsv1alpha1.ConditionSeverityError, "cannot list pods")
	setHeartbeat(st, t0, time.Minute)
	if conditionsv1alpha1.IsTrue(st, conditionsv1alpha1.ReadyCondition) || conditionsv1alpha1.GetReason(st, conditionsv1alpha1.ReadyCondition) != "Forbidden" {
		t.Errorf("Ready with a False condition: %+v", st.Status.Conditions)
	}
	conditionsv1alpha1.Delete(st, workloadv1alpha1.SyncerAuthorized)
	if setHeartbeat(st, t0.Add(2*time.Minute), time.Minute); conditionsv1alpha1.IsTrue(st, conditionsv1alpha1.ReadyCondition) {
		t.Errorf("a stale heartbeat: %+v", st.Status.Conditions)
	}
}

func ready(st *workloadv1alpha1.SyncTarget) *workloadv1alpha1.SyncTarget {
	conditionsv1alpha1.MarkTrue(st, conditionsv1alpha1.ReadyCondition)
	return st
}

func TestInstancesAndAvailability(t *testing.T) {
	eu := ready(syncTarget("eu", nil, map[string]string{"region": "eu"}))
	us := ready(syncTarget("us", nil, map[string]string{"region": "us"}))
	down := syncTarget("down", nil, map[string]string{"region": "eu"})
	loc := &schedulingv1alpha1.Location{Spec: schedulingv1alpha1.LocationSpec{Resource: stResource,
		InstanceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}}
	got := instancesOf(loc, []*workloadv1alpha1.SyncTarget{eu, us, down})
	if len(got) != 2 || got[0].Name != "eu" || got[1].Name != "down" {
		t.Errorf("instances: %v", got)
	}
	loc.Spec.InstanceSelector = nil
	if got := instancesOf(loc, []*workloadv1alpha1.SyncTarget{eu}); len(got) != 0 {
		t.Errorf("a Location without a selector has instances: %v", got)
	}
	if !isAvailable(eu, t0) || isAvailable(down, t0) {
		t.Error("availability follows Ready")
	}
	eu.Spec.EvictAfter = &metav1.Time{Time: t0.Add(time.Second)}
	if !isAvailable(eu, t0) || isAvailable(eu, t0.Add(time.Second)) {
		t.Error("availability ends at evictAfter")
	}
	us.Spec.Unschedulable = true
	if isAvailable(us, t0) {
		t.Error("an unschedulable SyncTarget is available")
	}
}

func location(name string, lbls map[string]string) *schedulingv1alpha1.Location {
	return &schedulingv1alpha1.Location{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Spec: schedulingv1alpha1.LocationSpec{Resource: stResource}}
}

func TestSelectLocation(t *testing.T) {
	p := &schedulingv1alpha1.Placement{Spec: schedulingv1alpha1.PlacementSpec{LocationResource: stResource,
		LocationSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"cloud": "aws"}}}}}
	gcp, aws1, aws2 := location("gcp", map[string]string{"cloud": "gcp"}), location("aws-1", map[string]string{"cloud": "aws"}), location("aws-2", map[string]string{"cloud": "aws"})

	selectLocation(p, "root:compute", true, []*schedulingv1alpha1.Location{gcp}, false, first)
	if p.Status.Phase != schedulingv1alpha1.PlacementPending || conditionsv1alpha1.GetReason(p, schedulingv1alpha1.PlacementReady) != schedulingv1alpha1.LocationNotMatchReason {
		t.Errorf("no matching location: %+v", p.Status)
	}
	selectLocation(p, "root:compute", true, []*schedulingv1alpha1.Location{gcp, aws2, aws1}, false, first)
	if p.Status.Phase != schedulingv1alpha1.PlacementUnbound || p.Status.SelectedLocation == nil || *p.Status.SelectedLocation != (schedulingv1alpha1.LocationReference{Path: "root:compute", LocationName: "aws-1"}) {
		t.Errorf("a matching location: %+v", p.Status)
	}
	// The choice is kept, whatever pick would say, and a bound namespace
	// makes the Placement Bound.
	selectLocation(p, "root:compute", true, []*schedulingv1alpha1.Location{gcp, aws2, aws1}, true, func(n int) int { return n - 1 })
	if p.Status.Phase != schedulingv1alpha1.PlacementBound || p.Status.SelectedLocation.LocationName != "aws-1" || !conditionsv1alpha1.IsTrue(p, schedulingv1alpha1.PlacementReady) {
		t.Errorf("bound: %+v", p.Status)
	}
	// A Bound Placement whose Location stops matching stays put, not Ready.
	aws1.Labels["cloud"] = "gone"
	selectLocation(p, "root:compute", true, []*schedulingv1alpha1.Location{gcp, aws2, aws1}, true, first)
	if p.Status.Phase != schedulingv1alpha1.PlacementBound || p.Status.SelectedLocation.LocationName != "aws-1" || conditionsv1alpha1.GetReason(p, schedulingv1alpha1.PlacementReady) != schedulingv1alpha1.LocationInvalidReason {
		t.Errorf("bound to an invalid location: %+v", p.Status)
	}
	// Unbound, it moves to a valid one.
	p.Status.Phase = schedulingv1alpha1.PlacementUnbound
	selectLocation(p, "root:compute", true, []*schedulingv1alpha1.Location{gcp, aws2, aws1}, false, first)
	if p.Status.SelectedLocation.LocationName != "aws-2" || !conditionsv1alpha1.IsTrue(p, schedulingv1alpha1.PlacementReady) {
		t.Errorf("unbound from an invalid location: %+v", p.Status)
	}
	selectLocation(p, "root:nowhere", false, nil, false, first)
	if p.Status.Phase != schedulingv1alpha1.PlacementPending || p.Status.SelectedLocation != nil || conditionsv1alpha1.GetReason(p, schedulingv1alpha1.PlacementReady) != schedulingv1alpha1.LocationNotFoundReason {
		t.Errorf("unknown location workspace: %+v", p.Status)
	}
}

func TestSupportsBindings(t *testing.T) {
	st := syncTarget("a", nil, nil)
	st.Status.SyncedResources = []workloadv1alpha1.ResourceToSync{
		{GroupResource: apisv1alpha1.GroupResource{Group: "apps", Resource: "deployments"}, IdentityHash: "k8s", State: workloadv1alpha1.ResourceSchemaAcceptedState},
		{GroupResource: apisv1alpha1.GroupResource{Resource: "services"}, IdentityHash: "k8s", State: workloadv1alpha1.ResourceSchemaIncompatibleState},
	}
	binding := func(resources ...string) *apisv1alpha1.APIBinding {
		b := &apisv1alpha1.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}}
		for i := 0; i < len(resources); i += 2 {
			r := apisv1alpha1.BoundAPIResource{Group: resources[i], Resource: resources[i+1]}
			r.Schema.IdentityHash = "k8s"
			b.Status.BoundResources = append(b.Status.BoundResources, r)
		}
		return b
	}
	if ok, _ := supportsBindings(st, []*apisv1alpha1.APIBinding{binding("apps", "deployments")}); !ok {
		t.Error("accepted deployments are not supported")
	}
	if ok, name := supportsBindings(st, []*apisv1alpha1.APIBinding{binding("apps", "deployments", "", "services")}); ok || name != "kubernetes" {
		t.Error("incompatible services are supported")
	}
	if ok, _ := supportsBindings(st, nil); !ok {
		t.Error("no compute binding: every SyncTarget fits")
	}
}

func TestScheduleSyncTarget(t *testing.T) {
	a, b := syncTarget("a", nil, nil), syncTarget("b", nil, nil)
	keyOf := func(st *workloadv1alpha1.SyncTarget) string { return "key-" + st.Name }
	if got := scheduleSyncTarget("key-b", []*workloadv1alpha1.SyncTarget{a, b}, keyOf, first); got != "key-b" {
		t.Errorf("the current SyncTarget was replaced by %q", got)
	}
	if got := scheduleSyncTarget("key-gone", []*workloadv1alpha1.SyncTarget{b, a}, keyOf, first); got != "key-a" {
		t.Errorf("moving off a gone SyncTarget: %q", got)
	}
	if got := scheduleSyncTarget("key-a", nil, keyOf, first); got != "" {
		t.Errorf("no candidate: %q", got)
	}
}

func placement(name, key string, phase schedulingv1alpha1.PlacementPhase, selector *metav1.LabelSelector) *schedulingv1alpha1.Placement {
	p := &schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1alpha1.PlacementSpec{NamespaceSelector: selector}}
	if key != "" {
		p.Annotations = map[string]string{SyncTargetPlacementAnnotationKey: key}
	}
	p.Status.Phase = phase
	conditionsv1alpha1.MarkTrue(p, schedulingv1alpha1.PlacementReady)
	return p
}

func TestScheduleNamespace(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{"team": "a"}}}
	all := &metav1.LabelSelector{}
	teamB := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}
	state := func(key string) string { return ns.Labels[workloadv1alpha1.ClusterResourceStateLabelPrefix+key] }
	deletion := func(key string) string {
		return ns.Annotations[workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix+key]
	}

	// A Pending Placement and one for another team place nothing.
	if changed, _ := scheduleNamespace(ns, []*schedulingv1alpha1.Placement{placement("p", "k1", schedulingv1alpha1.PlacementPending, all), placement("b", "k2", schedulingv1alpha1.PlacementBound, teamB)}, t0); changed {
		t.Errorf("placed by a Pending or unselecting Placement: %+v", ns.ObjectMeta)
	}
	// Two Placements to two SyncTargets.
	pls := []*schedulingv1alpha1.Placement{placement("p1", "k1", schedulingv1alpha1.PlacementUnbound, all), placement("p2", "k2", schedulingv1alpha1.PlacementBound, all)}
	if changed, _ := scheduleNamespace(ns, pls, t0); !changed || state("k1") != "Sync" || state("k2") != "Sync" {
		t.Errorf("placed: %+v", ns.ObjectMeta)
	}
	if _, ok := ns.Annotations[schedulingv1alpha1.PlacementAnnotationKey]; !ok {
		t.Errorf("no placement annotation: %+v", ns.Annotations)
	}
	if changed, _ := scheduleNamespace(ns, pls, t0); changed {
		t.Error("nothing to change, but changed")
	}
	// p2 moves to k3: k2 is removed after the grace period, k3 added.
	pls[1].Annotations[SyncTargetPlacementAnnotationKey] = "k3"
	changed, next := scheduleNamespace(ns, pls, t0)
	if !changed || state("k3") != "Sync" || state("k2") != "Sync" || deletion("k2") != t0.Format(time.RFC3339) || next != removingGracePeriod {
		t.Errorf("moving: next %v, %+v", next, ns.ObjectMeta)
	}
	if changed, next := scheduleNamespace(ns, pls, t0.Add(2*time.Second)); changed || next != 3*time.Second {
		t.Errorf("within the grace period: changed %v next %v", changed, next)
	}
	if changed, _ := scheduleNamespace(ns, pls, t0.Add(removingGracePeriod)); !changed || state("k2") != "" || deletion("k2") != "" || state("k1") != "Sync" {
		t.Errorf("after the grace period: %+v", ns.ObjectMeta)
	}
	// No Placement any more: the annotation goes, the labels are removed.
	if changed, _ := scheduleNamespace(ns, nil, t0); !changed || deletion("k1") == "" || deletion("k3") == "" {
		t.Errorf("unplaced: %+v", ns.ObjectMeta)
	}
	if _, ok := ns.Annotations[schedulingv1alpha1.PlacementAnnotationKey]; ok {
		t.Errorf("placement annotation kept: %+v", ns.Annotations)
	}
}

func TestLabelsString(t *testing.T) {
	if got := labelsString(map[string]string{"region": "eu", "cloud": "aws"}); got != "cloud=aws region=eu" {
		t.Errorf("labelsString = %q", got)
	}
}
