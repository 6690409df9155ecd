package resourcequotas

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidateEnforceable(t *testing.T) {
	tests := []struct {
		name       string
		rq, old    *corev1.ResourceQuota
		wantFields []string
	}{
		{name: "object counts", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("count/widgets.example.com", "3", "count/configmaps", "2", "configmaps", "2", "secrets", "1", "resourcequotas", "1")
		})},
		{name: "pods and compute", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "3", "requests.cpu", "1") }),
			wantFields: []string{"spec.hard[pods]", "spec.hard[requests.cpu]"}},
		{name: "services", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("services.loadbalancers", "1") }),
			wantFields: []string{"spec.hard[services.loadbalancers]"}},
		{name: "scopes", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("count/configmaps", "1")
			rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
		}), wantFields: []string{"spec.scopes"}},
		{name: "stored names kept on update", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "5", "secrets", "1") }),
			old: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "3") })},
		{name: "scope selector added on update", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("count/configmaps", "1")
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}},
			}}
		}), old: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("count/configmaps", "1") }), wantFields: []string{"spec.scopeSelector"}},
		{name: "scope selector changed on update", rq: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "1")
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"low"}},
			}}
		}), old: newQuota(func(rq *corev1.ResourceQuota) {
			rq.Spec.Hard = list("pods", "1")
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}},
			}}
		})},
		{name: "new name on update", rq: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "5", "memory", "1Gi") }),
			old: newQuota(func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list("pods", "3") }), wantFields: []string{"spec.hard[memory]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateEnforceable(tt.rq, tt.old)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if len(got) != len(tt.wantFields) {
				t.Fatalf("errors %v, want fields %v", errs, tt.wantFields)
			}
			for i := range got {
				if got[i] != tt.wantFields[i] {
					t.Errorf("error %d on %s, want %s", i, got[i], tt.wantFields[i])
				}
			}
		})
	}
}
