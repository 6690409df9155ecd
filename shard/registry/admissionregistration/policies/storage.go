package policies

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// category is the category of admission policies, so that `kubectl get
// api-extensions` lists them.
const category = "api-extensions"

// NewPolicyREST returns the storage of ValidatingAdmissionPolicies and of
// their status.
func NewPolicyREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, *subresource.REST, error) {
	strategy := NewPolicyStrategy(scheme, NewValidator())
	policies, err := store.NewREST(optsGetter, store.Options{
		Resource:       admissionregistrationv1.Resource("validatingadmissionpolicies"),
		Singular:       "validatingadmissionpolicy",
		NewFunc:        func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
		NewListFunc:    func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
		Strategy:       strategy,
		TableConvertor: PolicyTableConvertor(),
		Categories:     []string{category},
	})
	if err != nil {
		return nil, nil, err
	}
	return policies, subresource.New(policies.Store, PolicyStatusStrategy{strategy}), nil
}

// NewBindingREST returns the storage of ValidatingAdmissionPolicyBindings.
func NewBindingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       admissionregistrationv1.Resource("validatingadmissionpolicybindings"),
		Singular:       "validatingadmissionpolicybinding",
		NewFunc:        func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
		NewListFunc:    func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} },
		Strategy:       NewBindingStrategy(scheme, NewValidator()),
		TableConvertor: BindingTableConvertor(),
		Categories:     []string{category},
	})
}
