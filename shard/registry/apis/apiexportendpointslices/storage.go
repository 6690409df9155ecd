package apiexportendpointslices

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of apiexportendpointslices and
// apiexportendpointslices/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	slices, err := store.NewREST(optsGetter, store.Options{
		Resource:       apisv1alpha1.Resource("apiexportendpointslices"),
		Singular:       "apiexportendpointslice",
		NewFunc:        func() runtime.Object { return &apisv1alpha1.APIExportEndpointSlice{} },
		NewListFunc:    func() runtime.Object { return &apisv1alpha1.APIExportEndpointSliceList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"apiexportendpointslices":        slices,
		"apiexportendpointslices/status": subresource.New(slices.Store, statusStrategy{s}),
	}, nil
}
