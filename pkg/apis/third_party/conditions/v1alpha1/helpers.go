package v1alpha1

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Getter is an object whose status carries Conditions.
//
// +k8s:deepcopy-gen=false
type Getter interface {
	// GetConditions returns the conditions of the object. Callers must not
	// modify the returned slice.
	GetConditions() Conditions
}

// Setter is an object whose Conditions can be replaced.
//
// +k8s:deepcopy-gen=false
type Setter interface {
	Getter
	// SetConditions replaces the conditions of the object.
	SetConditions(Conditions)
}

// Get returns the condition of type t, or nil if from has none. The result
// points into from's conditions; copy it before changing it.
func Get(from Getter, t ConditionType) *Condition {
	conditions := from.GetConditions()
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// Has tells whether from has a condition of type t.
func Has(from Getter, t ConditionType) bool {
	return Get(from, t) != nil
}

// IsTrue tells whether from has a condition of type t with status True.
func IsTrue(from Getter, t ConditionType) bool {
	c := Get(from, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsFalse tells whether from has a condition of type t with status False.
func IsFalse(from Getter, t ConditionType) bool {
	c := Get(from, t)
	return c != nil && c.Status == corev1.ConditionFalse
}

// IsUnknown tells whether the condition of type t is missing or has status
// Unknown.
func IsUnknown(from Getter, t ConditionType) bool {
	c := Get(from, t)
	return c == nil || c.Status == corev1.ConditionUnknown
}

// GetReason returns the reason of the condition of type t, or "" if it is
// missing.
func GetReason(from Getter, t ConditionType) string {
	if c := Get(from, t); c != nil {
		return c.Reason
	}
	return ""
}

// GetMessage returns the message of the condition of type t, or "" if it is
// missing.
func GetMessage(from Getter, t ConditionType) string {
	if c := Get(from, t); c != nil {
		return c.Message
	}
	return ""
}

// GetSeverity returns the severity of the condition of type t, or nil if it
// is missing.
func GetSeverity(from Getter, t ConditionType) *ConditionSeverity {
	if c := Get(from, t); c != nil {
		s := c.Severity
		return &s
	}
	return nil
}

// GetLastTransitionTime returns the last transition time of the condition of
// type t, or nil if it is missing.
func GetLastTransitionTime(from Getter, t ConditionType) *metav1.Time {
	if c := Get(from, t); c != nil {
		ts := c.LastTransitionTime
		return &ts
	}
	return nil
}

// Set adds c to the conditions of to, or replaces the condition of the same
// type. It keeps the existing lastTransitionTime while the status does not
// change; otherwise it uses c's, or now if c has none. A condition that is
// already present with the same status, severity, reason and message is left
// untouched, so repeated calls do not produce spurious updates. Conditions
// are kept sorted: Ready first, then by type.
func Set(to Setter, c *Condition) {
	if c == nil {
		return
	}
	newCondition := *c
	conditions := to.GetConditions()
	if existing := Get(to, newCondition.Type); existing != nil {
		if sameState(existing, &newCondition) {
			return
		}
		if existing.Status == newCondition.Status {
			newCondition.LastTransitionTime = existing.LastTransitionTime
		}
	}
	if newCondition.LastTransitionTime.IsZero() {
		newCondition.LastTransitionTime = now()
	}

	// Build a new slice so that callers holding the old one (e.g. an informer
	// cache) never see it change.
	updated := make(Conditions, 0, len(conditions)+1)
	for i := range conditions {
		if conditions[i].Type != newCondition.Type {
			updated = append(updated, conditions[i])
		}
	}
	updated = append(updated, newCondition)
	sort.SliceStable(updated, func(i, j int) bool {
		return less(updated[i].Type, updated[j].Type)
	})
	to.SetConditions(updated)
}

// MarkTrue sets the condition of type t to True, clearing reason, message
// and severity.
func MarkTrue(to Setter, t ConditionType) {
	Set(to, TrueCondition(t))
}

// MarkFalse sets the condition of type t to False with the given reason,
// severity and message (a fmt format with its arguments).
func MarkFalse(to Setter, t ConditionType, reason string, severity ConditionSeverity, messageFormat string, messageArgs ...any) {
	Set(to, FalseCondition(t, reason, severity, messageFormat, messageArgs...))
}

// MarkUnknown sets the condition of type t to Unknown with the given reason
// and message (a fmt format with its arguments).
func MarkUnknown(to Setter, t ConditionType, reason string, messageFormat string, messageArgs ...any) {
	Set(to, UnknownCondition(t, reason, messageFormat, messageArgs...))
}

// Delete removes the condition of type t from to, if present.
func Delete(to Setter, t ConditionType) {
	if !Has(to, t) {
		return
	}
	conditions := to.GetConditions()
	updated := make(Conditions, 0, len(conditions)-1)
	for i := range conditions {
		if conditions[i].Type != t {
			updated = append(updated, conditions[i])
		}
	}
	to.SetConditions(updated)
}

// TrueCondition returns a condition of type t with status True.
func TrueCondition(t ConditionType) *Condition {
	return &Condition{Type: t, Status: corev1.ConditionTrue}
}

// FalseCondition returns a condition of type t with status False and the
// given reason, severity and message (a fmt format with its arguments).
func FalseCondition(t ConditionType, reason string, severity ConditionSeverity, messageFormat string, messageArgs ...any) *Condition {
	return &Condition{
		Type:     t,
		Status:   corev1.ConditionFalse,
		Reason:   reason,
		Severity: severity,
		Message:  message(messageFormat, messageArgs),
	}
}

// UnknownCondition returns a condition of type t with status Unknown and the
// given reason and message (a fmt format with its arguments).
func UnknownCondition(t ConditionType, reason string, messageFormat string, messageArgs ...any) *Condition {
	return &Condition{
		Type:    t,
		Status:  corev1.ConditionUnknown,
		Reason:  reason,
		Message: message(messageFormat, messageArgs),
	}
}

func message(format string, args []any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// sameState tells whether two conditions of the same type say the same thing,
// ignoring lastTransitionTime.
func sameState(a, b *Condition) bool {
	return a.Status == b.Status &&
		a.Severity == b.Severity &&
		a.Reason == b.Reason &&
		a.Message == b.Message
}

// less orders condition types: Ready first, then lexicographically.
func less(a, b ConditionType) bool {
	if a == ReadyCondition || b == ReadyCondition {
		return a == ReadyCondition && b != ReadyCondition
	}
	return a < b
}

// now returns the current time at the one-second precision that
// metav1.Time keeps on the wire, so that a round trip does not change it.
func now() metav1.Time {
	return metav1.NewTime(time.Now().UTC().Truncate(time.Second))
}
