package v1alpha1

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// object is a minimal Setter.
type object struct {
	conditions Conditions
}

func (o *object) GetConditions() Conditions  { return o.conditions }
func (o *object) SetConditions(c Conditions) { o.conditions = c }

var _ Setter = &object{}

func types(c Conditions) []ConditionType {
	var ts []ConditionType
	for _, x := range c {
		ts = append(ts, x.Type)
	}
	return ts
}

func TestGetters(t *testing.T) {
	o := &object{conditions: Conditions{
		{Type: ReadyCondition, Status: corev1.ConditionTrue},
		{Type: "Synced", Status: corev1.ConditionFalse, Reason: "Broken", Message: "it broke", Severity: ConditionSeverityError},
		{Type: "Pending", Status: corev1.ConditionUnknown},
	}}

	tests := []struct {
		t                          ConditionType
		has, isTrue, isFalse, unkn bool
		reason, message            string
	}{
		{t: ReadyCondition, has: true, isTrue: true},
		{t: "Synced", has: true, isFalse: true, reason: "Broken", message: "it broke"},
		{t: "Pending", has: true, unkn: true},
		{t: "Missing", unkn: true},
	}
	for _, tc := range tests {
		t.Run(string(tc.t), func(t *testing.T) {
			if got := Has(o, tc.t); got != tc.has {
				t.Errorf("Has = %v, want %v", got, tc.has)
			}
			if got := IsTrue(o, tc.t); got != tc.isTrue {
				t.Errorf("IsTrue = %v, want %v", got, tc.isTrue)
			}
			if got := IsFalse(o, tc.t); got != tc.isFalse {
				t.Errorf("IsFalse = %v, want %v", got, tc.isFalse)
			}
			if got := IsUnknown(o, tc.t); got != tc.unkn {
				t.Errorf("IsUnknown = %v, want %v", got, tc.unkn)
			}
			if got := GetReason(o, tc.t); got != tc.reason {
				t.Errorf("GetReason = %q, want %q", got, tc.reason)
			}
			if got := GetMessage(o, tc.t); got != tc.message {
				t.Errorf("GetMessage = %q, want %q", got, tc.message)
			}
			if got := Get(o, tc.t); (got != nil) != tc.has {
				t.Errorf("Get = %v, want present=%v", got, tc.has)
			}
			if got := GetLastTransitionTime(o, tc.t); (got != nil) != tc.has {
				t.Errorf("GetLastTransitionTime = %v, want present=%v", got, tc.has)
			}
		})
	}
	if s := GetSeverity(o, "Synced"); s == nil || *s != ConditionSeverityError {
		t.Errorf("GetSeverity(Synced) = %v, want Error", s)
	}
	if s := GetSeverity(o, "Missing"); s != nil {
		t.Errorf("GetSeverity(Missing) = %v, want nil", *s)
	}
}

func TestMark(t *testing.T) {
	tests := []struct {
		name string
		mark func(Setter)
		want Condition
	}{
		{
			name: "true",
			mark: func(o Setter) { MarkTrue(o, "A") },
			want: Condition{Type: "A", Status: corev1.ConditionTrue},
		},
		{
			name: "false with formatted message",
			mark: func(o Setter) {
				MarkFalse(o, "A", "Waiting", ConditionSeverityInfo, "waiting for %d initializers", 2)
			},
			want: Condition{Type: "A", Status: corev1.ConditionFalse, Reason: "Waiting", Severity: ConditionSeverityInfo, Message: "waiting for 2 initializers"},
		},
		{
			name: "false with a message containing a verb and no arguments",
			mark: func(o Setter) { MarkFalse(o, "A", "Failed", ConditionSeverityError, "100% broken") },
			want: Condition{Type: "A", Status: corev1.ConditionFalse, Reason: "Failed", Severity: ConditionSeverityError, Message: "100% broken"},
		},
		{
			name: "unknown",
			mark: func(o Setter) { MarkUnknown(o, "A", "NotObserved", "not observed yet") },
			want: Condition{Type: "A", Status: corev1.ConditionUnknown, Reason: "NotObserved", Message: "not observed yet"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &object{}
			tc.mark(o)
			if len(o.conditions) != 1 {
				t.Fatalf("got %d conditions, want 1", len(o.conditions))
			}
			got := o.conditions[0]
			if got.LastTransitionTime.IsZero() {
				t.Errorf("lastTransitionTime not set")
			}
			got.LastTransitionTime = metav1.Time{}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSetTransitionTime(t *testing.T) {
	past := metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
	o := &object{conditions: Conditions{{Type: "A", Status: corev1.ConditionFalse, Reason: "Old", LastTransitionTime: past}}}

	// Same status, other reason: the condition changes, its transition time does not.
	MarkFalse(o, "A", "New", ConditionSeverityWarning, "")
	if c := Get(o, "A"); c.Reason != "New" || !c.LastTransitionTime.Equal(&past) {
		t.Errorf("after reason change: got %+v, want reason New and lastTransitionTime %v", *c, past)
	}

	// Identical state: nothing is written, not even a new slice.
	before := o.conditions
	MarkFalse(o, "A", "New", ConditionSeverityWarning, "")
	if &before[0] != &o.conditions[0] {
		t.Errorf("setting an identical condition replaced the conditions")
	}

	// Status change: the transition time moves.
	MarkTrue(o, "A")
	if c := Get(o, "A"); c.LastTransitionTime.Equal(&past) || c.Reason != "" || c.Severity != ConditionSeverityNone {
		t.Errorf("after status change: got %+v, want a new lastTransitionTime and no reason or severity", *c)
	}

	// An explicit transition time on a new status is kept.
	Set(o, &Condition{Type: "A", Status: corev1.ConditionFalse, LastTransitionTime: past})
	if c := Get(o, "A"); !c.LastTransitionTime.Equal(&past) {
		t.Errorf("explicit lastTransitionTime: got %v, want %v", c.LastTransitionTime, past)
	}
}

func TestSetOrderAndCopy(t *testing.T) {
	o := &object{}
	MarkTrue(o, "Zeta")
	MarkTrue(o, "Alpha")
	MarkFalse(o, ReadyCondition, "NotYet", ConditionSeverityInfo, "")
	MarkTrue(o, "Mu")
	want := []ConditionType{ReadyCondition, "Alpha", "Mu", "Zeta"}
	if got := types(o.conditions); !equalTypes(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}

	// Replacing a condition must not write into the slice the caller had
	// (it may be shared with an informer cache).
	shared := o.conditions
	MarkTrue(o, "Alpha")
	MarkFalse(o, "Alpha", "Broken", ConditionSeverityError, "")
	if shared[1].Status != corev1.ConditionTrue {
		t.Errorf("Set modified the previous conditions slice: %+v", shared[1])
	}

	Set(o, nil)
	if len(o.conditions) != 4 {
		t.Errorf("Set(nil) changed the conditions: %v", types(o.conditions))
	}
}

func TestDelete(t *testing.T) {
	o := &object{}
	MarkTrue(o, "A")
	MarkTrue(o, "B")
	shared := o.conditions

	Delete(o, "Missing")
	if got := types(o.conditions); !equalTypes(got, []ConditionType{"A", "B"}) {
		t.Errorf("Delete(Missing) = %v", got)
	}
	Delete(o, "A")
	if got := types(o.conditions); !equalTypes(got, []ConditionType{"B"}) {
		t.Errorf("Delete(A) = %v", got)
	}
	if got := types(shared); !equalTypes(got, []ConditionType{"A", "B"}) {
		t.Errorf("Delete modified the previous conditions slice: %v", got)
	}
}

func equalTypes(a, b []ConditionType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
