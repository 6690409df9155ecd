package webhookconfigurations

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DefaultTimeoutSeconds is how long the API server waits for a webhook
// that does not say.
const DefaultTimeoutSeconds = 10

// SetMutatingDefaults defaults every webhook of a mutating configuration:
// failurePolicy Fail, matchPolicy Equivalent, empty (match-all) namespace
// and object selectors, timeoutSeconds 10, reinvocationPolicy Never, rule
// scope "*" and service port 443.
func SetMutatingDefaults(cfg *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		setCommonDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
		}
	}
}

// SetValidatingDefaults defaults every webhook of a validating
// configuration like SetMutatingDefaults, without reinvocation.
func SetValidatingDefaults(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		setCommonDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
	}
}

func setCommonDefaults(
	failurePolicy **admissionregistrationv1.FailurePolicyType,
	matchPolicy **admissionregistrationv1.MatchPolicyType,
	namespaceSelector, objectSelector **metav1.LabelSelector,
	timeoutSeconds **int32,
	rules []admissionregistrationv1.RuleWithOperations,
	clientConfig *admissionregistrationv1.WebhookClientConfig,
) {
	if *failurePolicy == nil {
		*failurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	if *matchPolicy == nil {
		*matchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if *namespaceSelector == nil {
		*namespaceSelector = &metav1.LabelSelector{}
	}
	if *objectSelector == nil {
		*objectSelector = &metav1.LabelSelector{}
	}
	if *timeoutSeconds == nil {
		*timeoutSeconds = ptr.To[int32](DefaultTimeoutSeconds)
	}
	for i := range rules {
		if rules[i].Scope == nil {
			rules[i].Scope = ptr.To(admissionregistrationv1.AllScopes)
		}
	}
	if clientConfig.Service != nil && clientConfig.Service.Port == nil {
		clientConfig.Service.Port = ptr.To[int32](443)
	}
}
