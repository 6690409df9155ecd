package secrets

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// REST is the storage of secrets.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage of secrets, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Secret{} },
		NewListFunc:               func() runtime.Object { return &corev1.SecretList{} },
		DefaultQualifiedResource:  corev1.Resource("secrets"),
		SingularQualifiedResource: corev1.Resource("secret"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            TableConvertor(),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, fmt.Errorf("completing secrets storage: %w", err)
	}
	return &REST{Store: store}, nil
}

// ShortNames returns no short name: Kubernetes has none for secrets.
func (*REST) ShortNames() []string {
	return nil
}
