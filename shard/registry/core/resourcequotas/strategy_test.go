package resourcequotas

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestStrategies(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme())
	rq := newQuota(func(rq *corev1.ResourceQuota) { rq.Status.Used = list("pods", "1") })
	strategy.PrepareForCreate(t.Context(), rq)
	if rq.Status.Used != nil {
		t.Errorf("status after create: %+v", rq.Status)
	}

	old := newQuota(func(rq *corev1.ResourceQuota) { rq.Status.Used = list("pods", "1") })
	update := newQuota(func(rq *corev1.ResourceQuota) {
		rq.Spec.Hard = list("pods", "20")
		rq.Status.Used = list("pods", "7")
	})
	strategy.PrepareForUpdate(t.Context(), update, old)
	if !update.Status.Used.Pods().Equal(resource.MustParse("1")) || !update.Spec.Hard.Pods().Equal(resource.MustParse("20")) {
		t.Errorf("main update: %+v", update)
	}

	status := newQuota(func(rq *corev1.ResourceQuota) {
		rq.Spec.Hard = list("pods", "20")
		rq.Status.Used = list("pods", "7")
	})
	StatusStrategy{strategy}.PrepareForUpdate(t.Context(), status, old)
	if !status.Status.Used.Pods().Equal(resource.MustParse("7")) || !status.Spec.Hard.Pods().Equal(resource.MustParse("10")) {
		t.Errorf("status update: %+v", status)
	}
}
