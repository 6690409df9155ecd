package shards

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of shards and shards/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	shards, err := store.NewREST(optsGetter, store.Options{
		Resource:       corev1alpha1.Resource("shards"),
		Singular:       "shard",
		NewFunc:        func() runtime.Object { return &corev1alpha1.Shard{} },
		NewListFunc:    func() runtime.Object { return &corev1alpha1.ShardList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"shards":        shards,
		"shards/status": subresource.New(shards.Store, statusStrategy{s}),
	}, nil
}
