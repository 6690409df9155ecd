package partitionsets

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of partitionsets and partitionsets/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	sets, err := store.NewREST(optsGetter, store.Options{
		Resource:       topologyv1alpha1.Resource("partitionsets"),
		Singular:       "partitionset",
		NewFunc:        func() runtime.Object { return &topologyv1alpha1.PartitionSet{} },
		NewListFunc:    func() runtime.Object { return &topologyv1alpha1.PartitionSetList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"partitionsets":        sets,
		"partitionsets/status": subresource.New(sets.Store, statusStrategy{s}),
	}, nil
}
