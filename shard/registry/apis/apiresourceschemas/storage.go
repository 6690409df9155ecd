package apiresourceschemas

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// NewStorage returns the storage of apiresourceschemas.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	schemas, err := store.NewREST(optsGetter, store.Options{
		Resource:       apisv1alpha1.Resource("apiresourceschemas"),
		Singular:       "apiresourceschema",
		NewFunc:        func() runtime.Object { return &apisv1alpha1.APIResourceSchema{} },
		NewListFunc:    func() runtime.Object { return &apisv1alpha1.APIResourceSchemaList{} },
		Strategy:       strategy{store.NewStrategy(scheme, store.ClusterScoped, validate, validateUpdate)},
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"apiresourceschemas": schemas}, nil
}
