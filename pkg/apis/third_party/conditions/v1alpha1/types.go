package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionSeverity classifies the reason of a condition whose status is not
// True, so that users and machines can tell an error from a passing state.
type ConditionSeverity string

const (
	// ConditionSeverityError marks a False condition as an error: the object
	// needs attention.
	ConditionSeverityError ConditionSeverity = "Error"
	// ConditionSeverityWarning marks a False condition as a warning: the
	// object may still work, or is expected to recover.
	ConditionSeverityWarning ConditionSeverity = "Warning"
	// ConditionSeverityInfo marks a False condition as informative, e.g. a
	// step that has not finished yet.
	ConditionSeverityInfo ConditionSeverity = "Info"
	// ConditionSeverityNone is the severity of True (and Unknown) conditions.
	ConditionSeverityNone ConditionSeverity = ""
)

// ConditionType is the type of a condition, in CamelCase or in
// foo.example.com/CamelCase.
type ConditionType string

// ReadyCondition summarizes the operational state of an object. Set sorts it
// before all other conditions.
const ReadyCondition ConditionType = "Ready"

// Reasons shared by the conditions of many objects.
const (
	// DeletingReason (severity Info) says a condition is not True because the
	// object is being deleted.
	DeletingReason = "Deleting"
	// DeletionFailedReason (severity Warning) says deleting the object ran
	// into problems; the deletion is retried.
	DeletionFailedReason = "DeletionFailed"
	// DeletedReason (severity Info) says a condition is not True because the
	// object was deleted.
	DeletedReason = "Deleted"
)

// Condition is an observation of one aspect of an object's operational state.
type Condition struct {
	// type of the condition, in CamelCase or in foo.example.com/CamelCase.
	// An object has at most one condition of each type.
	// +required
	// +kubebuilder:validation:Required
	Type ConditionType `json:"type"`

	// status of the condition: True, False or Unknown.
	// +required
	// +kubebuilder:validation:Required
	Status corev1.ConditionStatus `json:"status"`

	// severity classifies the reason of a condition that is not True (Error,
	// Warning or Info), so that users and machines can tell how to react.
	// It is empty when the status is True.
	// +optional
	Severity ConditionSeverity `json:"severity,omitempty"`

	// lastTransitionTime is when the status of the condition last changed. If
	// that is not known, the time the field was last written is acceptable.
	// +required
	// +kubebuilder:validation:Required
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// reason is a CamelCase word that explains the last transition. Each API
	// decides whether its reasons are part of its contract.
	// +optional
	Reason string `json:"reason,omitempty"`

	// message is a human-readable description of the last transition. It may
	// be empty.
	// +optional
	Message string `json:"message,omitempty"`
}

// Conditions is the list of conditions of an object, at most one per type.
type Conditions []Condition
