package certificatesigningrequests

import (
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// REST is the storage of certificate signing requests.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage of certificate signing requests and of their
// status and approval subresources, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (main *REST, status, approval *subresource.REST, err error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
		NewListFunc:               func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
		DefaultQualifiedResource:  certificatesv1.Resource("certificatesigningrequests"),
		SingularQualifiedResource: certificatesv1.Resource("certificatesigningrequest"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		ResetFieldsStrategy:       strategy,
		TableConvertor:            TableConvertor(),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, nil, nil, fmt.Errorf("completing certificatesigningrequests storage: %w", err)
	}

	statusStore := *store
	statusStore.UpdateStrategy = StatusStrategy{strategy}
	statusStore.ResetFieldsStrategy = StatusStrategy{strategy}

	approvalStore := *store
	approvalStore.UpdateStrategy = ApprovalStrategy{strategy}
	approvalStore.ResetFieldsStrategy = ApprovalStrategy{strategy}

	return &REST{Store: store}, subresource.New(&statusStore), subresource.New(&approvalStore), nil
}

// ShortNames returns the short name of certificate signing requests: csr.
func (*REST) ShortNames() []string {
	return []string{"csr"}
}
