package certificatesigningrequests

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewREST returns the storage of certificate signing requests and of their
// status and approval subresources, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (main *store.REST, status, approval *subresource.REST, err error) {
	strategy := NewStrategy(scheme)
	csrs, err := store.NewREST(optsGetter, store.Options{
		Resource:       certificatesv1.Resource("certificatesigningrequests"),
		Singular:       "certificatesigningrequest",
		NewFunc:        func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
		NewListFunc:    func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
		Strategy:       strategy,
		TableConvertor: TableConvertor(),
		AttrFunc:       GetAttrs,
		ShortNames:     []string{"csr"},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return csrs, subresource.New(csrs.Store, StatusStrategy{strategy}), subresource.New(csrs.Store, ApprovalStrategy{strategy}), nil
}
