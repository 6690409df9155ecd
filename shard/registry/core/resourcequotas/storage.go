package resourcequotas

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// REST is the storage of resource quotas.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage of resource quotas and of their status
// subresource, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, *subresource.REST, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1.ResourceQuota{} },
		NewListFunc:               func() runtime.Object { return &corev1.ResourceQuotaList{} },
		DefaultQualifiedResource:  corev1.Resource("resourcequotas"),
		SingularQualifiedResource: corev1.Resource("resourcequota"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		ResetFieldsStrategy:       strategy,
		TableConvertor:            TableConvertor(),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: storage.DefaultNamespaceScopedAttr}); err != nil {
		return nil, nil, fmt.Errorf("completing resourcequotas storage: %w", err)
	}
	statusStore := *store
	statusStore.UpdateStrategy = StatusStrategy{strategy}
	statusStore.ResetFieldsStrategy = StatusStrategy{strategy}
	return &REST{Store: store}, subresource.New(&statusStore), nil
}

// ShortNames returns the short name of resource quotas: quota.
func (*REST) ShortNames() []string {
	return []string{"quota"}
}
