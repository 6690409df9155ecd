package policies

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// PolicyStrategy implements the create, update and delete behaviour of
// ValidatingAdmissionPolicies. Writes keep the status; the generation
// counts changes of the spec, so admission can tell which policy it runs.
type PolicyStrategy struct {
	store.Strategy[*admissionregistrationv1.ValidatingAdmissionPolicy]
}

// NewPolicyStrategy returns the strategy of policies.
func NewPolicyStrategy(typer runtime.ObjectTyper, v *Validator) PolicyStrategy {
	return PolicyStrategy{store.NewStrategy(typer, store.ClusterScoped, v.ValidatePolicy, v.ValidatePolicyUpdate)}
}

// GetResetFields returns the fields writes reset: status.
func (PolicyStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(admissionregistrationv1.SchemeGroupVersion, "status")
}

// PrepareForCreate clears the status and starts the generation at 1.
func (PolicyStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
	p.Generation = 1
}

// PrepareForUpdate keeps the stored status and bumps the generation when
// the spec changes.
func (PolicyStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	p, oldP := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	p.Status = oldP.Status
	p.Generation = oldP.Generation
	if !equality.Semantic.DeepEqual(p.Spec, oldP.Spec) {
		p.Generation++
	}
}

// PolicyStatusStrategy updates the status only.
type PolicyStatusStrategy struct {
	PolicyStrategy
}

// GetResetFields returns the fields status writes reset: spec.
func (PolicyStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(admissionregistrationv1.SchemeGroupVersion, "spec")
}

// PrepareForUpdate keeps the stored spec.
func (PolicyStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec = old.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec
}

// ValidateUpdate validates a status update.
func (PolicyStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidatePolicyStatusUpdate(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy))
}

// BindingStrategy implements the create, update and delete behaviour of
// ValidatingAdmissionPolicyBindings; the generation counts spec changes.
type BindingStrategy struct {
	store.Strategy[*admissionregistrationv1.ValidatingAdmissionPolicyBinding]
}

// NewBindingStrategy returns the strategy of bindings.
func NewBindingStrategy(typer runtime.ObjectTyper, v *Validator) BindingStrategy {
	return BindingStrategy{store.NewStrategy(typer, store.ClusterScoped, v.ValidateBinding, v.ValidateBindingUpdate)}
}

// PrepareForCreate starts the generation at 1.
func (BindingStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Generation = 1
}

// PrepareForUpdate bumps the generation when the spec changes.
func (BindingStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	b, oldB := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding), old.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	b.Generation = oldB.Generation
	if !equality.Semantic.DeepEqual(b.Spec, oldB.Spec) {
		b.Generation++
	}
}
