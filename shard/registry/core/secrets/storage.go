package secrets

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// NewREST returns the storage of secrets, persisted through optsGetter.
// Kubernetes has no short name for secrets.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       corev1.Resource("secrets"),
		Singular:       "secret",
		NewFunc:        func() runtime.Object { return &corev1.Secret{} },
		NewListFunc:    func() runtime.Object { return &corev1.SecretList{} },
		Strategy:       NewStrategy(scheme),
		TableConvertor: TableConvertor(),
		AttrFunc:       GetAttrs,
	})
}
