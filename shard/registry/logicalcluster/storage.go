package logicalcluster

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewStorage returns the storage of logicalclusters and logicalclusters/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	clusters, err := store.NewREST(optsGetter, store.Options{
		Resource:       corev1alpha1.Resource("logicalclusters"),
		Singular:       "logicalcluster",
		NewFunc:        func() runtime.Object { return &corev1alpha1.LogicalCluster{} },
		NewListFunc:    func() runtime.Object { return &corev1alpha1.LogicalClusterList{} },
		Strategy:       s,
		TableConvertor: tableConvertor(),
		AttrFunc:       GetAttrs,
		ShortNames:     []string{"lc"},
		Categories:     []string{"kcp"},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"logicalclusters":        clusters,
		"logicalclusters/status": subresource.New(clusters.Store, statusStrategy{s}),
	}, nil
}
