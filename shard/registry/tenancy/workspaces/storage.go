package workspaces

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of workspaces and workspaces/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	workspaces, err := store.NewREST(optsGetter, store.Options{
		Resource:       tenancyv1alpha1.Resource("workspaces"),
		Singular:       "workspace",
		NewFunc:        func() runtime.Object { return &tenancyv1alpha1.Workspace{} },
		NewListFunc:    func() runtime.Object { return &tenancyv1alpha1.WorkspaceList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		AttrFunc:       GetAttrs,
		ShortNames:     []string{"ws"},
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"workspaces":        workspaces,
		"workspaces/status": subresource.New(workspaces.Store, statusStrategy{s}),
	}, nil
}
