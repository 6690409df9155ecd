package workspacetypes

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of workspacetypes and workspacetypes/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	types, err := store.NewREST(optsGetter, store.Options{
		Resource:       tenancyv1alpha1.Resource("workspacetypes"),
		Singular:       "workspacetype",
		NewFunc:        func() runtime.Object { return &tenancyv1alpha1.WorkspaceType{} },
		NewListFunc:    func() runtime.Object { return &tenancyv1alpha1.WorkspaceTypeList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"workspacetypes":        types,
		"workspacetypes/status": subresource.New(types.Store, statusStrategy{s}),
	}, nil
}
