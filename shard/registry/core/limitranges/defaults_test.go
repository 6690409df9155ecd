package limitranges

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestSetDefaults(t *testing.T) {
	lr := newLimitRange(
		corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("cpu", "2", "memory", "1Gi"), Min: list("ephemeral-storage", "1Gi"), Default: list("memory", "512Mi")},
		corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: list("cpu", "4")},
	)
	SetDefaults(lr)
	container := lr.Spec.Limits[0]
	if diff := cmp.Diff(list("cpu", "2", "memory", "512Mi"), container.Default); diff != "" {
		t.Errorf("default (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(list("cpu", "2", "memory", "512Mi", "ephemeral-storage", "1Gi"), container.DefaultRequest); diff != "" {
		t.Errorf("defaultRequest (-want +got):\n%s", diff)
	}
	if pod := lr.Spec.Limits[1]; pod.Default != nil || pod.DefaultRequest != nil {
		t.Errorf("pod limits got defaults: %+v", pod)
	}
}
