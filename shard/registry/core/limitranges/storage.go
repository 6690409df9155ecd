package limitranges

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
)

// REST is the storage of limit ranges.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage of limit ranges, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1.LimitRange{} },
		NewListFunc:               func() runtime.Object { return &corev1.LimitRangeList{} },
		DefaultQualifiedResource:  corev1.Resource("limitranges"),
		SingularQualifiedResource: corev1.Resource("limitrange"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            TableConvertor(),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: storage.DefaultNamespaceScopedAttr}); err != nil {
		return nil, fmt.Errorf("completing limitranges storage: %w", err)
	}
	return &REST{Store: store}, nil
}

// ShortNames returns the short name of limit ranges: limits.
func (*REST) ShortNames() []string {
	return []string{"limits"}
}
