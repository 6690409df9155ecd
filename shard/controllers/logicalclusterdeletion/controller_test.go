package logicalclusterdeletion

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

func TestDeletingFilter(t *testing.T) {
	lc := func(name string, deleted bool, finalizers ...string) *corev1alpha1.LogicalCluster {
		lc := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}
		if deleted {
			now := metav1.Now()
			lc.DeletionTimestamp = &now
		}
		return lc
	}
	for _, tc := range []struct {
		name string
		obj  any
		want bool
	}{
		{"deleted with finalizer", lc("cluster", true, "a", Finalizer), true},
		{"not deleted", lc("cluster", false, Finalizer), false},
		{"finalizer gone", lc("cluster", true, "a"), false},
		{"not the singleton", lc("other", true, Finalizer), false},
		{"not a LogicalCluster", "cluster", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := deleting(tc.obj); got != tc.want {
				t.Errorf("deleting = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFromUnstructured(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
		"metadata": map[string]any{"name": "cluster", "finalizers": []any{Finalizer}, "resourceVersion": "4"},
		"spec":     map[string]any{"owner": map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "resource": "workspaces", "name": "ws", "cluster": "root", "uid": "u"}},
		"status":   map[string]any{"phase": "Ready", "conditions": []any{map[string]any{"type": "WorkspaceContentDeleted", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}}},
	}}
	lc, err := fromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	if lc.Name != "cluster" || lc.ResourceVersion != "4" || len(lc.Finalizers) != 1 || lc.Spec.Owner == nil || lc.Spec.Owner.Name != "ws" ||
		lc.Status.Phase != "Ready" || len(lc.Status.Conditions) != 1 || lc.Status.Conditions[0].LastTransitionTime.IsZero() {
		t.Errorf("fromUnstructured = %+v", lc)
	}
	u.Object["spec"] = "not an object"
	if _, err := fromUnstructured(u); err == nil {
		t.Errorf("fromUnstructured accepted a malformed object")
	}
}
