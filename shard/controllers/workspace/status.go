package workspace

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// mirrorStatus copies the state of the workspace's LogicalCluster lc into
// ws.Status: the phase, the initializers left, and the condition
// WorkspaceInitialized (the LogicalCluster's own if it has one, otherwise
// derived from the initializers left). It marks WorkspaceScheduled True:
// lc exists.
func mirrorStatus(ws *tenancyv1alpha1.Workspace, lc *corev1alpha1.LogicalCluster) {
	if lc.Status.Phase != "" {
		ws.Status.Phase = lc.Status.Phase
	}
	ws.Status.Initializers = slices.Clone(lc.Status.Initializers)
	if len(ws.Status.Initializers) == 0 {
		ws.Status.Initializers = nil
	}
	if c := conditionsv1alpha1.Get(lc, corev1alpha1.WorkspaceInitialized); c != nil {
		conditionsv1alpha1.Set(ws, c)
	} else if len(lc.Status.Initializers) > 0 {
		conditionsv1alpha1.MarkFalse(ws, corev1alpha1.WorkspaceInitialized, corev1alpha1.WorkspaceInitializedInitializerExists,
			conditionsv1alpha1.ConditionSeverityInfo, "Initializers still exist: %v", lc.Status.Initializers)
	} else {
		conditionsv1alpha1.MarkTrue(ws, corev1alpha1.WorkspaceInitialized)
	}
	conditionsv1alpha1.MarkTrue(ws, tenancyv1alpha1.WorkspaceScheduled)
}

// markUnavailable records on ws that the shard of its logical cluster
// cannot be reached, keeping the phase. It returns whether the condition
// changed; an existing Unavailable condition is kept as is, so that a shard
// that stays down does not cause a status write per attempt.
func markUnavailable(ws *tenancyv1alpha1.Workspace, format string, args ...any) bool {
	if isUnavailable(ws) {
		return false
	}
	conditionsv1alpha1.MarkFalse(ws, tenancyv1alpha1.WorkspaceScheduled, tenancyv1alpha1.WorkspaceReasonUnavailable,
		conditionsv1alpha1.ConditionSeverityWarning, format, args...)
	return true
}

// isUnavailable tells whether ws shows that the shard of its logical
// cluster is unknown or cannot be reached.
func isUnavailable(ws *tenancyv1alpha1.Workspace) bool {
	c := conditionsv1alpha1.Get(ws, tenancyv1alpha1.WorkspaceScheduled)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == tenancyv1alpha1.WorkspaceReasonUnavailable
}

// markUnschedulable records on ws why it cannot be scheduled.
func markUnschedulable(ws *tenancyv1alpha1.Workspace, format string, args ...any) {
	conditionsv1alpha1.MarkFalse(ws, tenancyv1alpha1.WorkspaceScheduled, tenancyv1alpha1.WorkspaceReasonUnschedulable,
		conditionsv1alpha1.ConditionSeverityError, format, args...)
}
