package apiexports

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of apiexports and apiexports/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	exports, err := store.NewREST(optsGetter, store.Options{
		Resource:       apisv1alpha1.Resource("apiexports"),
		Singular:       "apiexport",
		NewFunc:        func() runtime.Object { return &apisv1alpha1.APIExport{} },
		NewListFunc:    func() runtime.Object { return &apisv1alpha1.APIExportList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"apiexports":        exports,
		"apiexports/status": subresource.New(exports.Store, statusStrategy{s}),
	}, nil
}
