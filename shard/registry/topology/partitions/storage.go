package partitions

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// NewStorage returns the storage of partitions. Partitions have no status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	partitions, err := store.NewREST(optsGetter, store.Options{
		Resource:       topologyv1alpha1.Resource("partitions"),
		Singular:       "partition",
		NewFunc:        func() runtime.Object { return &topologyv1alpha1.Partition{} },
		NewListFunc:    func() runtime.Object { return &topologyv1alpha1.PartitionList{} },
		Strategy:       newStrategy(scheme),
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"partitions": partitions}, nil
}
