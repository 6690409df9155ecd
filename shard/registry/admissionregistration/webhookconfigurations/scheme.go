// Package webhookconfigurations is the registry of
// admissionregistration.k8s.io/v1 mutatingwebhookconfigurations and
// validatingwebhookconfigurations: scheme registration, defaulting,
// strategies, validation (including the CEL match conditions), storage and
// table printing.
package webhookconfigurations

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers the webhook configuration kinds as
// admissionregistration.k8s.io/v1 kinds and as kinds of the group's
// internal version, their defaulting, and their field selector labels.
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: admissionregistrationv1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{admissionregistrationv1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv,
			&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.MutatingWebhookConfigurationList{},
			&admissionregistrationv1.ValidatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfigurationList{},
		)
	}

	s.AddTypeDefaultingFunc(&admissionregistrationv1.MutatingWebhookConfiguration{}, func(obj interface{}) {
		SetMutatingDefaults(obj.(*admissionregistrationv1.MutatingWebhookConfiguration))
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.MutatingWebhookConfigurationList{}, func(obj interface{}) {
		list := obj.(*admissionregistrationv1.MutatingWebhookConfigurationList)
		for i := range list.Items {
			SetMutatingDefaults(&list.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.ValidatingWebhookConfiguration{}, func(obj interface{}) {
		SetValidatingDefaults(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.ValidatingWebhookConfigurationList{}, func(obj interface{}) {
		list := obj.(*admissionregistrationv1.ValidatingWebhookConfigurationList)
		for i := range list.Items {
			SetValidatingDefaults(&list.Items[i])
		}
	})

	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		if err := s.AddFieldLabelConversionFunc(admissionregistrationv1.SchemeGroupVersion.WithKind(kind), runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
			return fmt.Errorf("registering %s field labels: %w", kind, err)
		}
	}
	return nil
}
