package webhookconfigurations

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// category is the category of webhook configurations, so that `kubectl get
// api-extensions` lists them. Kubernetes has no short name for them.
const category = "api-extensions"

// NewMutatingREST returns the storage of mutating webhook configurations,
// persisted through optsGetter.
func NewMutatingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       admissionregistrationv1.Resource("mutatingwebhookconfigurations"),
		Singular:       "mutatingwebhookconfiguration",
		NewFunc:        func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
		NewListFunc:    func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
		Strategy:       NewMutatingStrategy(scheme, NewValidator()),
		TableConvertor: MutatingTableConvertor(),
		Categories:     []string{category},
	})
}

// NewValidatingREST returns the storage of validating webhook
// configurations, persisted through optsGetter.
func NewValidatingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       admissionregistrationv1.Resource("validatingwebhookconfigurations"),
		Singular:       "validatingwebhookconfiguration",
		NewFunc:        func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
		NewListFunc:    func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
		Strategy:       NewValidatingStrategy(scheme, NewValidator()),
		TableConvertor: ValidatingTableConvertor(),
		Categories:     []string{category},
	})
}
