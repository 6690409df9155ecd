package webhookconfigurations

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func validWebhook() admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name: "policy.example.com",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{
			URL: ptr.To("https://policy.example.com/validate"),
		},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		}},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
}

func service() *admissionregistrationv1.ServiceReference {
	return &admissionregistrationv1.ServiceReference{Namespace: "policy", Name: "webhook", Path: ptr.To("/validate")}
}

func validating(mutate ...func(*admissionregistrationv1.ValidatingWebhook)) *admissionregistrationv1.ValidatingWebhookConfiguration {
	w := validWebhook()
	for _, m := range mutate {
		m(&w)
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "policy", ResourceVersion: "1"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{w},
	}
}

func mutating(mutate func(*admissionregistrationv1.MutatingWebhook)) *admissionregistrationv1.MutatingWebhookConfiguration {
	v := validWebhook()
	w := admissionregistrationv1.MutatingWebhook{
		Name: v.Name, ClientConfig: v.ClientConfig, Rules: v.Rules, SideEffects: v.SideEffects, AdmissionReviewVersions: v.AdmissionReviewVersions,
	}
	if mutate != nil {
		mutate(&w)
	}
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults", ResourceVersion: "1"},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{w},
	}
}

func checkFirst(t *testing.T, errs field.ErrorList, want string) {
	t.Helper()
	if want == "" {
		if len(errs) != 0 {
			t.Fatalf("want valid, got %v", errs)
		}
		return
	}
	if len(errs) == 0 || errs[0].Field != want {
		t.Fatalf("want first error on %q, got %v", want, errs)
	}
}

func TestValidate(t *testing.T) {
	v := NewValidator()
	type hook = admissionregistrationv1.ValidatingWebhook
	tests := []struct {
		name      string
		cfg       *admissionregistrationv1.ValidatingWebhookConfiguration
		wantField string
	}{
		{name: "valid", cfg: validating()},
		{name: "url", cfg: validating(func(w *hook) {
			w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://policy.example.com/validate")}
		})},
		{name: "all resources and subresources", cfg: validating(func(w *hook) { w.Rules[0].Resources = []string{"*/*"} })},
		{name: "match condition", cfg: validating(func(w *hook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-system", Expression: `!request.userInfo.username.startsWith("system:")`}}
		})},
		{name: "no webhooks", cfg: &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}},
		{name: "two-segment name", cfg: validating(func(w *hook) { w.Name = "example.com" }), wantField: "webhooks[0].name"},
		{name: "one-segment name", cfg: validating(func(w *hook) { w.Name = "policy" }), wantField: "webhooks[0].name"},
		{name: "duplicate names", cfg: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
			c := validating()
			c.Webhooks = append(c.Webhooks, c.Webhooks[0])
			return c
		}(), wantField: "webhooks[1].name"},
		{name: "url and service", cfg: validating(func(w *hook) { w.ClientConfig.Service = service() }), wantField: "webhooks[0].clientConfig"},
		{name: "service", cfg: validating(func(w *hook) { w.ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: service()} }), wantField: "webhooks[0].clientConfig.service"},
		{name: "neither url nor service", cfg: validating(func(w *hook) { w.ClientConfig = admissionregistrationv1.WebhookClientConfig{} }), wantField: "webhooks[0].clientConfig"},
		{name: "http url", cfg: validating(func(w *hook) {
			w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("http://policy.example.com")}
		}), wantField: "webhooks[0].clientConfig.url"},
		{name: "service without namespace", cfg: validating(func(w *hook) {
			w.ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: service()}
			w.ClientConfig.Service.Namespace = ""
		}), wantField: "webhooks[0].clientConfig.service.namespace"},
		{name: "bad service port", cfg: validating(func(w *hook) {
			w.ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: service()}
			w.ClientConfig.Service.Port = ptr.To[int32](0)
		}), wantField: "webhooks[0].clientConfig.service.port"},
		{name: "no operations", cfg: validating(func(w *hook) { w.Rules[0].Operations = nil }), wantField: "webhooks[0].rules[0].operations"},
		{name: "unknown operation", cfg: validating(func(w *hook) { w.Rules[0].Operations = []admissionregistrationv1.OperationType{"PATCH"} }), wantField: "webhooks[0].rules[0].operations[0]"},
		{name: "no api groups", cfg: validating(func(w *hook) { w.Rules[0].APIGroups = nil }), wantField: "webhooks[0].rules[0].apiGroups"},
		{name: "wildcard and versions", cfg: validating(func(w *hook) { w.Rules[0].APIVersions = []string{"*", "v1"} }), wantField: "webhooks[0].rules[0].apiVersions"},
		{name: "no resources", cfg: validating(func(w *hook) { w.Rules[0].Resources = nil }), wantField: "webhooks[0].rules[0].resources"},
		{name: "covered subresource", cfg: validating(func(w *hook) { w.Rules[0].Resources = []string{"pods/*", "pods/status"} }), wantField: "webhooks[0].rules[0].resources[1]"},
		{name: "bad scope", cfg: validating(func(w *hook) { w.Rules[0].Scope = ptr.To(admissionregistrationv1.ScopeType("Global")) }), wantField: "webhooks[0].rules[0].scope"},
		{name: "no side effects", cfg: validating(func(w *hook) { w.SideEffects = nil }), wantField: "webhooks[0].sideEffects"},
		{name: "side effects Some", cfg: validating(func(w *hook) { w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome) }), wantField: "webhooks[0].sideEffects"},
		{name: "no review versions", cfg: validating(func(w *hook) { w.AdmissionReviewVersions = nil }), wantField: "webhooks[0].admissionReviewVersions"},
		{name: "unknown review version", cfg: validating(func(w *hook) { w.AdmissionReviewVersions = []string{"v2"} }), wantField: "webhooks[0].admissionReviewVersions"},
		{name: "timeout", cfg: validating(func(w *hook) { w.TimeoutSeconds = ptr.To[int32](31) }), wantField: "webhooks[0].timeoutSeconds"},
		{name: "failure policy", cfg: validating(func(w *hook) { w.FailurePolicy = ptr.To(admissionregistrationv1.FailurePolicyType("Retry")) }), wantField: "webhooks[0].failurePolicy"},
		{name: "match policy", cfg: validating(func(w *hook) { w.MatchPolicy = ptr.To(admissionregistrationv1.MatchPolicyType("Fuzzy")) }), wantField: "webhooks[0].matchPolicy"},
		{name: "bad selector", cfg: validating(func(w *hook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}), wantField: "webhooks[0].namespaceSelector.matchExpressions[0].operator"},
		{name: "match condition without name", cfg: validating(func(w *hook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Expression: "true"}}
		}), wantField: "webhooks[0].matchConditions[0].name"},
		{name: "match condition not CEL", cfg: validating(func(w *hook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "broken", Expression: "request.("}}
		}), wantField: "webhooks[0].matchConditions[0].expression"},
		{name: "match condition not boolean", cfg: validating(func(w *hook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "string", Expression: "request.userInfo.username"}}
		}), wantField: "webhooks[0].matchConditions[0].expression"},
		{name: "bad name", cfg: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
			c := validating()
			c.Name = "Policy"
			return c
		}(), wantField: "metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkFirst(t, v.ValidateValidating(tt.cfg), tt.wantField) })
	}
}

func TestValidateMutating(t *testing.T) {
	v := NewValidator()
	checkFirst(t, v.ValidateMutating(mutating(nil)), "")
	checkFirst(t, v.ValidateMutating(mutating(func(w *admissionregistrationv1.MutatingWebhook) {
		w.ReinvocationPolicy = ptr.To(admissionregistrationv1.ReinvocationPolicyType("Always"))
	})), "webhooks[0].reinvocationPolicy")
	checkFirst(t, v.ValidateMutating(mutating(func(w *admissionregistrationv1.MutatingWebhook) { w.Name = "x" })), "webhooks[0].name")
}

func TestValidateUpdateKeepsStoredViolations(t *testing.T) {
	v := NewValidator()
	legacy := validating(func(w *admissionregistrationv1.ValidatingWebhook) {
		w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassUnknown)
	})
	relabeled := legacy.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	checkFirst(t, v.ValidateValidatingUpdate(relabeled, legacy), "")
	checkFirst(t, v.ValidateValidatingUpdate(legacy, validating()), "webhooks[0].sideEffects")

	mutatingLegacy := mutating(func(w *admissionregistrationv1.MutatingWebhook) { w.AdmissionReviewVersions = []string{"v0"} })
	checkFirst(t, v.ValidateMutatingUpdate(mutatingLegacy.DeepCopy(), mutatingLegacy), "")
	checkFirst(t, v.ValidateMutatingUpdate(mutatingLegacy, mutating(nil)), "webhooks[0].admissionReviewVersions")
}

func TestValidateUpdateKeepsStoredMatchConditions(t *testing.T) {
	v := NewValidator()
	bad := []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "object.("}, {Name: "bad name!", Expression: "true"}}
	stored := validating(func(w *admissionregistrationv1.ValidatingWebhook) { w.MatchConditions = bad })
	relabeled := stored.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	checkFirst(t, v.ValidateValidatingUpdate(relabeled, stored), "")
	// A change of any webhook's conditions, or of the webhooks, validates
	// them all again, as in Kubernetes.
	dropped := stored.DeepCopy()
	dropped.Webhooks[0].MatchConditions = bad[:1]
	checkFirst(t, v.ValidateValidatingUpdate(dropped, stored), "webhooks[0].matchConditions[0].expression")
	added := stored.DeepCopy()
	added.Webhooks = append(added.Webhooks, validWebhook())
	added.Webhooks[1].Name = "other.example.com"
	checkFirst(t, v.ValidateValidatingUpdate(added, stored), "webhooks[0].matchConditions[0].expression")

	mutatingStored := mutating(func(w *admissionregistrationv1.MutatingWebhook) { w.MatchConditions = bad })
	checkFirst(t, v.ValidateMutatingUpdate(mutatingStored.DeepCopy(), mutatingStored), "")
}
