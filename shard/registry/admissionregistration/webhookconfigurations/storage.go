package webhookconfigurations

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
)

// REST is the storage of mutating or validating webhook configurations.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// ShortNames returns no short name: Kubernetes has none for webhook
// configurations.
func (*REST) ShortNames() []string {
	return nil
}

// Categories returns the category of webhook configurations,
// api-extensions, so that `kubectl get api-extensions` lists them.
func (*REST) Categories() []string {
	return []string{"api-extensions"}
}

// NewMutatingREST returns the storage of mutating webhook configurations,
// persisted through optsGetter.
func NewMutatingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewMutatingStrategy(scheme, NewValidator())
	return newREST(&genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
		NewListFunc:               func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
		DefaultQualifiedResource:  admissionregistrationv1.Resource("mutatingwebhookconfigurations"),
		SingularQualifiedResource: admissionregistrationv1.Resource("mutatingwebhookconfiguration"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            MutatingTableConvertor(),
	}, optsGetter)
}

// NewValidatingREST returns the storage of validating webhook
// configurations, persisted through optsGetter.
func NewValidatingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewValidatingStrategy(scheme, NewValidator())
	return newREST(&genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
		NewListFunc:               func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
		DefaultQualifiedResource:  admissionregistrationv1.Resource("validatingwebhookconfigurations"),
		SingularQualifiedResource: admissionregistrationv1.Resource("validatingwebhookconfiguration"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            ValidatingTableConvertor(),
	}, optsGetter)
}

func newREST(store *genericregistry.Store, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: storage.DefaultClusterScopedAttr}); err != nil {
		return nil, fmt.Errorf("completing %s storage: %w", store.DefaultQualifiedResource, err)
	}
	return &REST{Store: store}, nil
}
