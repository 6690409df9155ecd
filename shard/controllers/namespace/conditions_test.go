package namespace

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func conditionOf(conds []corev1.NamespaceCondition, t corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    progress
		// want maps condition types to status and message.
		want map[corev1.NamespaceConditionType][2]string
	}{
		{
			name: "nothing to report",
			want: map[corev1.NamespaceConditionType][2]string{
				corev1.NamespaceDeletionDiscoveryFailure: {"False", "All resources successfully discovered"},
				corev1.NamespaceDeletionGVParsingFailure: {"False", "All legacy kube types successfully parsed"},
				corev1.NamespaceDeletionContentFailure:   {"False", "All content successfully deleted, may be waiting on finalization"},
				corev1.NamespaceContentRemaining:         {"False", "All content successfully removed"},
				corev1.NamespaceFinalizersRemaining:      {"False", "All content-preserving finalizers finished"},
			},
		},
		{
			name: "everything wrong",
			p: progress{
				discoveryErr: errors.New("example.com/v1: 503"),
				parseErr:     errors.New("bad"),
				contentErrs:  map[schema.GroupResource]error{{Resource: "secrets"}: errors.New("denied")},
				remaining:    map[schema.GroupResource]int{{Group: "example.com", Resource: "widgets"}: 1, {Resource: "configmaps"}: 2},
				finalizers:   map[string]int{"example.com/keep": 3},
			},
			want: map[corev1.NamespaceConditionType][2]string{
				corev1.NamespaceDeletionDiscoveryFailure: {"True", "Discovery failed for some groups: example.com/v1: 503"},
				corev1.NamespaceDeletionGVParsingFailure: {"True", "Failed to parse some group versions: bad"},
				corev1.NamespaceDeletionContentFailure:   {"True", "Failed to delete all resource types, 1 remaining: secrets: denied"},
				corev1.NamespaceContentRemaining:         {"True", "Some resources are remaining: configmaps has 2 resource instances, widgets.example.com has 1 resource instances"},
				corev1.NamespaceFinalizersRemaining:      {"True", "Some content in the namespace has finalizers remaining: example.com/keep in 3 resource instances"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.conditions()
			if len(got) != len(tc.want) {
				t.Fatalf("conditions() = %v, want %d conditions", got, len(tc.want))
			}
			for typ, w := range tc.want {
				c := conditionOf(got, typ)
				if c == nil {
					t.Errorf("condition %s missing", typ)
					continue
				}
				if string(c.Status) != w[0] || c.Message != w[1] {
					t.Errorf("condition %s = %s %q, want %s %q", typ, c.Status, c.Message, w[0], w[1])
				}
			}
		})
	}
}

func TestMergeConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	existing := []corev1.NamespaceCondition{
		{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, Reason: "SomeResourcesRemain", Message: "a", LastTransitionTime: t0},
		{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionFalse, Reason: "ContentHasNoFinalizers", Message: "ok", LastTransitionTime: t0},
		{Type: "Other", Status: corev1.ConditionTrue, LastTransitionTime: t0},
	}

	same, changed := mergeConditions(existing, existing[:2], t1)
	if changed || len(same) != 3 {
		t.Errorf("merging equal conditions changed them: %v", same)
	}

	got, changed := mergeConditions(existing, []corev1.NamespaceCondition{
		{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, Reason: "SomeResourcesRemain", Message: "b"},
		{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue, Reason: "SomeFinalizersRemain", Message: "f"},
		{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse, Reason: "ContentDeleted"},
	}, t1)
	if !changed {
		t.Fatal("mergeConditions() reported no change")
	}
	if c := conditionOf(got, corev1.NamespaceContentRemaining); c.Message != "b" || !c.LastTransitionTime.Equal(&t0) {
		t.Errorf("message-only change = %+v, want message b and the old transition time", c)
	}
	if c := conditionOf(got, corev1.NamespaceFinalizersRemaining); c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Equal(&t1) {
		t.Errorf("status change = %+v, want True at the new time", c)
	}
	if c := conditionOf(got, corev1.NamespaceDeletionContentFailure); c == nil || !c.LastTransitionTime.Equal(&t1) {
		t.Errorf("new condition = %+v, want it added at the new time", c)
	}
	if conditionOf(got, "Other") == nil {
		t.Error("a foreign condition was dropped")
	}
	if existing[0].Message != "a" {
		t.Error("mergeConditions() changed its input")
	}
}

func TestRequeueDelay(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, time.Second},
		{2 * time.Second, time.Second},
		{20 * time.Second, 5 * time.Second},
		{time.Hour, time.Minute},
	} {
		if got := requeueDelay(tc.in); got != tc.want {
			t.Errorf("requeueDelay(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
