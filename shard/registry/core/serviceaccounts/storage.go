package serviceaccounts

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
)

// REST is the storage of service accounts.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage of service accounts, persisted through
// optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1.ServiceAccount{} },
		NewListFunc:               func() runtime.Object { return &corev1.ServiceAccountList{} },
		DefaultQualifiedResource:  corev1.Resource("serviceaccounts"),
		SingularQualifiedResource: corev1.Resource("serviceaccount"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            TableConvertor(),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: storage.DefaultNamespaceScopedAttr}); err != nil {
		return nil, fmt.Errorf("completing serviceaccounts storage: %w", err)
	}
	return &REST{Store: store}, nil
}

// ShortNames returns the short name of service accounts: sa.
func (*REST) ShortNames() []string {
	return []string{"sa"}
}
