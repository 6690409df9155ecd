package apibindings

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of apibindings and apibindings/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	bindings, err := store.NewREST(optsGetter, store.Options{
		Resource:       apisv1alpha1.Resource("apibindings"),
		Singular:       "apibinding",
		NewFunc:        func() runtime.Object { return &apisv1alpha1.APIBinding{} },
		NewListFunc:    func() runtime.Object { return &apisv1alpha1.APIBindingList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"apibindings":        bindings,
		"apibindings/status": subresource.New(bindings.Store, statusStrategy{s}),
	}, nil
}
