package webhookconfigurations

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webhook is what validation reads of a mutating or a validating webhook;
// the two types differ only in reinvocationPolicy.
type webhook struct {
	Name                    string
	ClientConfig            admissionregistrationv1.WebhookClientConfig
	Rules                   []admissionregistrationv1.RuleWithOperations
	FailurePolicy           *admissionregistrationv1.FailurePolicyType
	MatchPolicy             *admissionregistrationv1.MatchPolicyType
	NamespaceSelector       *metav1.LabelSelector
	ObjectSelector          *metav1.LabelSelector
	SideEffects             *admissionregistrationv1.SideEffectClass
	TimeoutSeconds          *int32
	AdmissionReviewVersions []string
	MatchConditions         []admissionregistrationv1.MatchCondition
	ReinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType
}

func mutatingWebhooks(cfg *admissionregistrationv1.MutatingWebhookConfiguration) []webhook {
	hooks := make([]webhook, len(cfg.Webhooks))
	for i, w := range cfg.Webhooks {
		hooks[i] = webhook{
			Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules,
			FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
			NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector,
			SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds,
			AdmissionReviewVersions: w.AdmissionReviewVersions, MatchConditions: w.MatchConditions,
			ReinvocationPolicy: w.ReinvocationPolicy,
		}
	}
	return hooks
}

func validatingWebhooks(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) []webhook {
	hooks := make([]webhook, len(cfg.Webhooks))
	for i, w := range cfg.Webhooks {
		hooks[i] = webhook{
			Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules,
			FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
			NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector,
			SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds,
			AdmissionReviewVersions: w.AdmissionReviewVersions, MatchConditions: w.MatchConditions,
		}
	}
	return hooks
}
