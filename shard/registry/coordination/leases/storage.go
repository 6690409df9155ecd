package leases

import (
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
)

// REST is the storage of leases.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage of leases, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &coordinationv1.Lease{} },
		NewListFunc:               func() runtime.Object { return &coordinationv1.LeaseList{} },
		DefaultQualifiedResource:  coordinationv1.Resource("leases"),
		SingularQualifiedResource: coordinationv1.Resource("lease"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            TableConvertor(),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: storage.DefaultNamespaceScopedAttr}); err != nil {
		return nil, fmt.Errorf("completing leases storage: %w", err)
	}
	return &REST{Store: store}, nil
}

// ShortNames returns no short name: Kubernetes has none for leases.
func (*REST) ShortNames() []string {
	return nil
}
