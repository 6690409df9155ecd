package logicalclusterdeletion

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

// statusPatch returns the JSON merge patch that sets the status conditions
// of old to those of new, conditional on old's resourceVersion and UID, or
// nil if they are equal. Conditions are an atomic list: the patch replaces
// it as a whole.
func statusPatch(old, new *corev1alpha1.LogicalCluster) ([]byte, error) {
	if equality.Semantic.DeepEqual(old.Status.Conditions, new.Status.Conditions) {
		return nil, nil
	}
	return marshalPatch(old, map[string]any{
		"metadata": preconditions(old),
		"status":   map[string]any{"conditions": new.Status.Conditions},
	})
}

// finalizersPatch returns the JSON merge patch that sets the finalizers of
// old to those of new, conditional on old's resourceVersion and UID, or nil
// if they are equal.
func finalizersPatch(old, new *corev1alpha1.LogicalCluster) ([]byte, error) {
	if slices.Equal(old.Finalizers, new.Finalizers) {
		return nil, nil
	}
	meta := preconditions(old)
	if len(new.Finalizers) == 0 {
		meta["finalizers"] = nil
	} else {
		meta["finalizers"] = new.Finalizers
	}
	return marshalPatch(old, map[string]any{"metadata": meta})
}

func preconditions(lc *corev1alpha1.LogicalCluster) map[string]any {
	return map[string]any{"resourceVersion": lc.ResourceVersion, "uid": string(lc.UID)}
}

func marshalPatch(lc *corev1alpha1.LogicalCluster, patch map[string]any) ([]byte, error) {
	b, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encoding patch of LogicalCluster %s: %w", lc.Name, err)
	}
	return b, nil
}
