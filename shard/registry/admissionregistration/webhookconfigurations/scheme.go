// Package webhookconfigurations is the registry of
// admissionregistration.k8s.io/v1 mutatingwebhookconfigurations and
// validatingwebhookconfigurations: scheme registration, defaulting,
// strategies, validation (including the CEL match conditions), storage and
// table printing.
package webhookconfigurations

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers the webhook configuration kinds as
// admissionregistration.k8s.io/v1 kinds and as kinds of the group's
// internal version, their defaulting, and their field selector labels.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, admissionregistrationv1.SchemeGroupVersion,
		&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.MutatingWebhookConfigurationList{},
		&admissionregistrationv1.ValidatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfigurationList{},
	)
	store.AddDefaulting(s, SetMutatingDefaults, func(l *admissionregistrationv1.MutatingWebhookConfigurationList) []admissionregistrationv1.MutatingWebhookConfiguration {
		return l.Items
	})
	store.AddDefaulting(s, SetValidatingDefaults, func(l *admissionregistrationv1.ValidatingWebhookConfigurationList) []admissionregistrationv1.ValidatingWebhookConfiguration {
		return l.Items
	})
	return store.AddFieldLabels(s, admissionregistrationv1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion,
		"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
}
