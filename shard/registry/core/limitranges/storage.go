package limitranges

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// NewREST returns the storage of limit ranges, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       corev1.Resource("limitranges"),
		Singular:       "limitrange",
		NewFunc:        func() runtime.Object { return &corev1.LimitRange{} },
		NewListFunc:    func() runtime.Object { return &corev1.LimitRangeList{} },
		Strategy:       NewStrategy(scheme),
		TableConvertor: TableConvertor(),
		ShortNames:     []string{"limits"},
	})
}
