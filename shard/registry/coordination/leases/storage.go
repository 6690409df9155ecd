package leases

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// NewREST returns the storage of leases, persisted through optsGetter.
// Kubernetes has no short name for leases.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       coordinationv1.Resource("leases"),
		Singular:       "lease",
		NewFunc:        func() runtime.Object { return &coordinationv1.Lease{} },
		NewListFunc:    func() runtime.Object { return &coordinationv1.LeaseList{} },
		Strategy:       NewStrategy(scheme),
		TableConvertor: TableConvertor(),
	})
}
