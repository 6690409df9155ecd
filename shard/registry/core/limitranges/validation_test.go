package limitranges

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func list(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func newLimitRange(items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default", ResourceVersion: "1"},
		Spec:       corev1.LimitRangeSpec{Limits: items},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		lr        *corev1.LimitRange
		wantField string
	}{
		{name: "container", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer,
			Max: list("cpu", "2"), Min: list("cpu", "100m"), Default: list("cpu", "1"), DefaultRequest: list("cpu", "500m"), MaxLimitRequestRatio: list("cpu", "4")})},
		{name: "pod and pvc", lr: newLimitRange(
			corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: list("memory", "4Gi")},
			corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Max: list("storage", "10Gi")})},
		{name: "extended resource", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("example.com/gpu", "2")})},
		{name: "qualified type", lr: newLimitRange(corev1.LimitRangeItem{Type: "example.com/thing", Max: list("cpu", "1")})},
		{name: "unknown type", lr: newLimitRange(corev1.LimitRangeItem{Type: "Node"}), wantField: "spec.limits[0].type"},
		{name: "duplicate type", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod}, corev1.LimitRangeItem{Type: corev1.LimitTypePod}), wantField: "spec.limits[1].type"},
		{name: "bad resource", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("gpu", "1")}), wantField: "spec.limits[0].max[gpu]"},
		{name: "pods is not a container resource", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("pods", "1")}), wantField: "spec.limits[0].max[pods]"},
		// Kubernetes takes negative bounds (test/fidelity compares).
		{name: "negative", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("cpu", "-1")})},
		{name: "min over max", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("cpu", "1"), Min: list("cpu", "2")}), wantField: "spec.limits[0].min[cpu]"},
		{name: "default over max", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("cpu", "1"), Default: list("cpu", "2")}), wantField: "spec.limits[0].default[cpu]"},
		{name: "request over default", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: list("cpu", "1"), DefaultRequest: list("cpu", "2")}), wantField: "spec.limits[0].defaultRequest[cpu]"},
		{name: "pod defaults", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Default: list("cpu", "1")}), wantField: "spec.limits[0].default"},
		{name: "ratio below one", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: list("cpu", "500m")}), wantField: "spec.limits[0].maxLimitRequestRatio[cpu]"},
		{name: "ratio above max/min", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("cpu", "1"), Min: list("cpu", "500m"), MaxLimitRequestRatio: list("cpu", "3")}), wantField: "spec.limits[0].maxLimitRequestRatio[cpu]"},
		{name: "pvc without storage bounds", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim}), wantField: "spec.limits[0].limits"},
		{name: "huge pages need equal defaults", lr: newLimitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: list("hugepages-2Mi", "4Mi"), DefaultRequest: list("hugepages-2Mi", "2Mi")}), wantField: "spec.limits[0].defaultRequest[hugepages-2Mi]"},
		{name: "bad name", lr: func() *corev1.LimitRange { lr := newLimitRange(); lr.Name = "A"; return lr }(), wantField: "metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.lr)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) == 0 || errs[0].Field != tt.wantField {
				t.Fatalf("want first error on %q, got %v", tt.wantField, errs)
			}
		})
	}
	renamed := newLimitRange()
	renamed.Name = "other"
	if errs := ValidateUpdate(renamed, newLimitRange()); len(errs) == 0 {
		t.Error("renaming: want an error")
	}
}
