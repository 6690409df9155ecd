package serviceaccounts

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// NewREST returns the storage of service accounts, persisted through
// optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       corev1.Resource("serviceaccounts"),
		Singular:       "serviceaccount",
		NewFunc:        func() runtime.Object { return &corev1.ServiceAccount{} },
		NewListFunc:    func() runtime.Object { return &corev1.ServiceAccountList{} },
		Strategy:       NewStrategy(scheme),
		TableConvertor: TableConvertor(),
		ShortNames:     []string{"sa"},
	})
}
