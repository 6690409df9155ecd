package resourcequotas

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewREST returns the storage of resource quotas and of their status
// subresource, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, *subresource.REST, error) {
	strategy := NewStrategy(scheme)
	quotas, err := store.NewREST(optsGetter, store.Options{
		Resource:       corev1.Resource("resourcequotas"),
		Singular:       "resourcequota",
		NewFunc:        func() runtime.Object { return &corev1.ResourceQuota{} },
		NewListFunc:    func() runtime.Object { return &corev1.ResourceQuotaList{} },
		Strategy:       strategy,
		TableConvertor: TableConvertor(),
		ShortNames:     []string{"quota"},
	})
	if err != nil {
		return nil, nil, err
	}
	return quotas, subresource.New(quotas.Store, StatusStrategy{strategy}), nil
}
