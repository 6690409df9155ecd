package workspace

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestMirrorStatus(t *testing.T) {
	lcWith := func(phase corev1alpha1.LogicalClusterPhaseType, initializers ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
		return &corev1alpha1.LogicalCluster{Status: corev1alpha1.LogicalClusterStatus{Phase: phase, Initializers: initializers}}
	}
	for _, tc := range []struct {
		name            string
		lc              *corev1alpha1.LogicalCluster
		wantPhase       corev1alpha1.LogicalClusterPhaseType
		wantInitialized corev1.ConditionStatus
		wantReason      string
	}{
		{name: "initializing", lc: lcWith("Initializing", "system:owner", "root:universal"), wantPhase: "Initializing",
			wantInitialized: corev1.ConditionFalse, wantReason: corev1alpha1.WorkspaceInitializedInitializerExists},
		{name: "ready", lc: lcWith("Ready"), wantPhase: "Ready", wantInitialized: corev1.ConditionTrue},
		{name: "unavailable", lc: lcWith("Unavailable"), wantPhase: "Unavailable", wantInitialized: corev1.ConditionTrue},
		{name: "the logical cluster's own condition wins", lc: func() *corev1alpha1.LogicalCluster {
			lc := lcWith("Initializing", "root:universal")
			conditionsv1alpha1.MarkFalse(lc, corev1alpha1.WorkspaceInitialized, "Custom", conditionsv1alpha1.ConditionSeverityInfo, "waiting")
			return lc
		}(), wantPhase: "Initializing", wantInitialized: corev1.ConditionFalse, wantReason: "Custom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := &tenancyv1alpha1.Workspace{Status: tenancyv1alpha1.WorkspaceStatus{Phase: "Scheduling"}}
			markUnavailable(ws, "down")
			mirrorStatus(ws, tc.lc)
			if ws.Status.Phase != tc.wantPhase {
				t.Errorf("phase = %q, want %q", ws.Status.Phase, tc.wantPhase)
			}
			if len(ws.Status.Initializers) != len(tc.lc.Status.Initializers) {
				t.Errorf("initializers = %v, want %v", ws.Status.Initializers, tc.lc.Status.Initializers)
			}
			c := conditionsv1alpha1.Get(ws, corev1alpha1.WorkspaceInitialized)
			if c == nil || c.Status != tc.wantInitialized || c.Reason != tc.wantReason {
				t.Errorf("WorkspaceInitialized = %+v, want %s/%s", c, tc.wantInitialized, tc.wantReason)
			}
			if !conditionsv1alpha1.IsTrue(ws, tenancyv1alpha1.WorkspaceScheduled) {
				t.Errorf("WorkspaceScheduled is not True after the logical cluster was seen")
			}

			// Mirroring the same state again changes nothing.
			before := ws.DeepCopy()
			mirrorStatus(ws, tc.lc)
			if !equalStatus(before, ws) {
				t.Errorf("mirroring twice changed the status")
			}
		})
	}
}

func equalStatus(a, b *tenancyv1alpha1.Workspace) bool {
	return a.Status.Phase == b.Status.Phase && len(a.Status.Conditions) == len(b.Status.Conditions) &&
		func() bool {
			for i := range a.Status.Conditions {
				if a.Status.Conditions[i] != b.Status.Conditions[i] {
					return false
				}
			}
			return true
		}()
}

func TestMarkUnavailableOnce(t *testing.T) {
	ws := &tenancyv1alpha1.Workspace{}
	if !markUnavailable(ws, "shard %s down: %v", "s1", "connection refused") {
		t.Fatalf("first markUnavailable reported no change")
	}
	if markUnavailable(ws, "shard %s down: %v", "s1", "i/o timeout") {
		t.Errorf("second markUnavailable with another error text changed the condition again")
	}
	if r := conditionsv1alpha1.GetReason(ws, tenancyv1alpha1.WorkspaceScheduled); r != tenancyv1alpha1.WorkspaceReasonUnavailable {
		t.Errorf("reason = %q", r)
	}
}

func TestBackoff(t *testing.T) {
	b := newBackoff(100*time.Millisecond, time.Second)
	a, c := reconciler.Key{Cluster: "p", Name: "a"}, reconciler.Key{Cluster: "p", Name: "c"}
	var got []time.Duration
	for range 6 {
		got = append(got, b.next(a))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays = %v, want %v", got, want)
		}
	}
	if d := b.next(c); d != 100*time.Millisecond {
		t.Errorf("another key starts at %v", d)
	}
	b.reset(a)
	if d := b.next(a); d != 100*time.Millisecond {
		t.Errorf("after reset: %v", d)
	}
	// Another cap: the delay grows past the backoff's own max, and comes
	// back down to it.
	b.reset(a)
	got = nil
	for range 6 {
		got = append(got, b.nextUpTo(a, 2*time.Second))
	}
	got = append(got, b.next(a))
	want = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second, time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays with another cap = %v, want %v", got, want)
	}
	b.reset(a)
	b.reset(c)
	if b.len() != 0 {
		t.Errorf("%d keys left after reset", b.len())
	}
}

func TestOwnerOf(t *testing.T) {
	lc := func(owner map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "cluster"}, "spec": map[string]any{"owner": owner}}
	}
	good := map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "resource": "workspaces", "name": "team", "cluster": "parent", "uid": "u1"}
	with := func(k string, v any) map[string]any {
		o := map[string]any{}
		for k, v := range good {
			o[k] = v
		}
		o[k] = v
		return o
	}
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want bool
	}{
		{"workspace owner", lc(good), true},
		{"other group", lc(with("apiVersion", "example.com/v1")), false},
		{"other resource", lc(with("resource", "things")), false},
		{"invalid cluster", lc(with("cluster", "")), false},
		{"no owner", map[string]any{"metadata": map[string]any{"name": "cluster"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := &corev1alpha1.LogicalCluster{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tc.obj, lc); err != nil {
				t.Fatal(err)
			}
			key, uid, ok := ownerOf(lc)
			if ok != tc.want {
				t.Fatalf("ok = %v, want %v", ok, tc.want)
			}
			if ok && (key != reconciler.Key{Cluster: "parent", Name: "team"} || uid != "u1") {
				t.Errorf("key = %+v uid = %q", key, uid)
			}
		})
	}
}
