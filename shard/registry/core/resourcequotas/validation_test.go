package resourcequotas

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

func newQuota(mutate ...func(*corev1.ResourceQuota)) *corev1.ResourceQuota {
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: "default", ResourceVersion: "1"},
		Spec:       corev1.ResourceQuotaSpec{Hard: list("pods", "10", "requests.cpu", "4", "count/deployments.apps", "5")},
	}
	for _, m := range mutate {
		m(rq)
	}
	return rq
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		rq        *corev1.ResourceQuota
		wantField string
	}{
		{name: "valid", rq: newQuota()},
		{name: "extended resource", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("requests.example.com/gpu", "2") })},
		{name: "scopes", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "3")
			rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
		})},
		{name: "scope selector", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "3")
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
		})},
		{name: "unknown resource", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("gpus", "1") }), wantField: "spec.hard[gpus]"},
		{name: "storage is not a quota resource", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("storage", "1Gi") }), wantField: "spec.hard[storage]"},
		{name: "negative", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("requests.cpu", "-1") }), wantField: "spec.hard[requests.cpu]"},
		{name: "fractional count", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "1500m") }), wantField: "spec.hard[pods]"},
		{name: "unknown scope", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Scopes = []corev1.ResourceQuotaScope{"Weekends"}
			rq.Spec.Hard = nil
		}), wantField: "spec.scopes"},
		{name: "scope for wrong resource", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("requests.cpu", "1")
			rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
		}), wantField: "spec.scopes"},
		{name: "conflicting scopes", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "1")
			rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating}
		}), wantField: "spec.scopes"},
		{name: "selector without values", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "1")
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn}}}
		}), wantField: "spec.scopeSelector.matchExpressions.values"},
		{name: "selector best effort needs Exists", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "1")
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpIn, Values: []string{"x"}}}}
		}), wantField: "spec.scopeSelector.matchExpressions.operator"},
		{name: "bad status", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Status.Used = list("pods", "-1") }), wantField: "status.used[pods]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.rq)
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
}

func TestValidateUpdate(t *testing.T) {
	if errs := ValidateUpdate(newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "20") }), newQuota()); len(errs) != 0 {
		t.Errorf("changing hard: %v", errs)
	}
	scoped := func(rq *corev1.ResourceQuota) {
		rq.Spec.Hard = list("pods", "1")
		rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	}
	if errs := ValidateUpdate(newQuota(scoped), newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "1") })); len(errs) != 1 || errs[0].Field != "spec.scopes" {
		t.Errorf("adding a scope: %v, want one error on spec.scopes", errs)
	}
	twoScopes := func(scopes ...corev1.ResourceQuotaScope) func(*corev1.ResourceQuota) {
		return func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "1")
			rq.Spec.Scopes = scopes
		}
	}
	if errs := ValidateUpdate(newQuota(twoScopes(corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeNotTerminating)),
		newQuota(twoScopes(corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort))); len(errs) != 0 {
		t.Errorf("reordering scopes, which Kubernetes allows: %v", errs)
	}
	selector := func(class string) func(*corev1.ResourceQuota) {
		return func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "1")
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{class}},
			}}
		}
	}
	if errs := ValidateUpdate(newQuota(selector("low")), newQuota(selector("high"))); len(errs) != 0 {
		t.Errorf("changing the scope selector, which Kubernetes allows: %v", errs)
	}
	if errs := ValidateStatusUpdate(newQuota(func(rq *corev1.ResourceQuota) { rq.Status.Used = list("pods", "2") }), newQuota()); len(errs) != 0 {
		t.Errorf("status update: %v", errs)
	}
	if errs := ValidateStatusUpdate(newQuota(func(rq *corev1.ResourceQuota) { rq.Status.Used = list("pods", "-2") }), newQuota()); len(errs) != 1 || errs[0].Field != "status.used[pods]" {
		t.Errorf("negative usage: %v, want one error on status.used[pods]", errs)
	}
}
