package policies

import (
	"context"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// MutatingAdmissionPolicies and their bindings: a policy mutates CREATE
// and UPDATE requests only.

var (
	mutatingOperations    = []string{string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create), string(admissionregistrationv1.Update)}
	reinvocationPolicies  = []string{string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy)}
	patchTypes            = []string{string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch)}
	mutatingPolicyKinds   = []runtime.Object{&admissionregistrationv1.MutatingAdmissionPolicy{}, &admissionregistrationv1.MutatingAdmissionPolicyList{}}
	mutatingBindingKinds  = []runtime.Object{&admissionregistrationv1.MutatingAdmissionPolicyBinding{}, &admissionregistrationv1.MutatingAdmissionPolicyBindingList{}}
	mutatingKindsForLabel = []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}
)

// addMutatingToScheme registers the mutating policy kinds and their
// defaulting.
func addMutatingToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, admissionregistrationv1.SchemeGroupVersion, append(slices.Clone(mutatingPolicyKinds), mutatingBindingKinds...)...)
	store.AddDefaulting(s, SetMutatingPolicyDefaults, func(l *admissionregistrationv1.MutatingAdmissionPolicyList) []admissionregistrationv1.MutatingAdmissionPolicy {
		return l.Items
	})
	store.AddDefaulting(s, SetMutatingBindingDefaults, func(l *admissionregistrationv1.MutatingAdmissionPolicyBindingList) []admissionregistrationv1.MutatingAdmissionPolicyBinding {
		return l.Items
	})
	return store.AddFieldLabels(s, admissionregistrationv1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion, mutatingKindsForLabel...)
}

// SetMutatingPolicyDefaults defaults a mutating policy as Kubernetes does:
// failurePolicy Fail, and the defaults of its match constraints.
func SetMutatingPolicyDefaults(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	setMatchDefaults(p.Spec.MatchConstraints)
}

// SetMutatingBindingDefaults defaults the match resources of a binding.
func SetMutatingBindingDefaults(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	setMatchDefaults(b.Spec.MatchResources)
}

// ValidateMutatingPolicy validates a new mutating policy.
func (v *Validator) ValidateMutatingPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, v.validateMutatingSpec(&p.Spec, nil, false, field.NewPath("spec"))...)
}

// ValidateMutatingPolicyUpdate validates an update of a mutating policy as
// ValidatePolicyUpdate does a validating one.
func (v *Validator) ValidateMutatingPolicyUpdate(p, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	stored := sets.New[string]()
	for _, mc := range old.Spec.MatchConditions {
		stored.Insert(mc.Expression)
	}
	for _, vr := range old.Spec.Variables {
		stored.Insert(vr.Expression)
	}
	for _, m := range old.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			stored.Insert(m.ApplyConfiguration.Expression)
		}
		if m.JSONPatch != nil {
			stored.Insert(m.JSONPatch.Expression)
		}
	}
	keep := keepsMatchConditions(p.Spec.ParamKind, old.Spec.ParamKind, p.Spec.MatchConditions, old.Spec.MatchConditions)
	return append(allErrs, v.validateMutatingSpec(&p.Spec, stored, keep, field.NewPath("spec"))...)
}

// validateMutatingOperations refuses rules for operations a policy cannot
// mutate.
func validateMutatingOperations(m *admissionregistrationv1.MatchResources, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m == nil {
		return nil
	}
	for _, rule := range m.ResourceRules {
		for _, op := range rule.Operations {
			if !slices.Contains(mutatingOperations, string(op)) {
				allErrs = append(allErrs, field.NotSupported(fldPath.Child("resourceRules", "operations"), op, mutatingOperations))
			}
		}
	}
	return allErrs
}

func (v *Validator) validateMutatingSpec(spec *admissionregistrationv1.MutatingAdmissionPolicySpec, stored sets.Set[string], skipMatchConditions bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.FailurePolicy == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("failurePolicy"), ""))
	} else if !slices.Contains(failurePolicies, string(*spec.FailurePolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("failurePolicy"), *spec.FailurePolicy, failurePolicies))
	}
	if spec.ParamKind != nil {
		allErrs = append(allErrs, validateParamKind(spec.ParamKind, fldPath.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("matchConstraints"), ""))
	} else {
		allErrs = append(allErrs, validateMatchResources(spec.MatchConstraints, true, fldPath.Child("matchConstraints"))...)
		allErrs = append(allErrs, validateMutatingOperations(spec.MatchConstraints, fldPath.Child("matchConstraints"))...)
	}
	cc, err := cel.NewCompositedCompiler(v.envSet())
	if err != nil {
		return append(allErrs, field.InternalError(fldPath, err))
	}
	c := compiler{c: cc, stored: stored}
	opts := cel.OptionalVariableDeclarations{HasParams: spec.ParamKind != nil, HasAuthorizer: true}
	allErrs = append(allErrs, validateVariables(c, spec.Variables, opts, fldPath.Child("variables"))...)
	if !skipMatchConditions {
		allErrs = append(allErrs, validateMatchConditions(c, spec.MatchConditions, opts, fldPath.Child("matchConditions"))...)
	}

	patchOpts := opts
	patchOpts.HasPatchTypes = true
	if len(spec.Mutations) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range spec.Mutations {
		p := fldPath.Child("mutations").Index(i)
		switch {
		case m.PatchType == "":
			allErrs = append(allErrs, field.Required(p.Child("patchType"), ""))
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch:
			if m.JSONPatch == nil {
				allErrs = append(allErrs, field.Required(p.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
			} else {
				allErrs = append(allErrs, compilePatch(c, &patch.JSONPatchCondition{Expression: strings.TrimSpace(m.JSONPatch.Expression)}, patchOpts, p.Child("jsonPatch", "expression"))...)
			}
			if m.ApplyConfiguration != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
			}
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration:
			if m.ApplyConfiguration == nil {
				allErrs = append(allErrs, field.Required(p.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
			} else {
				allErrs = append(allErrs, compilePatch(c, &patch.ApplyConfigurationCondition{Expression: strings.TrimSpace(m.ApplyConfiguration.Expression)}, patchOpts, p.Child("applyConfiguration", "expression"))...)
			}
			if m.JSONPatch != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("patchType"), m.PatchType, patchTypes))
		}
	}
	if spec.ReinvocationPolicy == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(reinvocationPolicies, string(spec.ReinvocationPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("reinvocationPolicy"), spec.ReinvocationPolicy, reinvocationPolicies))
	}
	return allErrs
}

// compilePatch compiles the expression of a mutation.
func compilePatch(c compiler, accessor cel.ExpressionAccessor, opts cel.OptionalVariableDeclarations, fldPath *field.Path) field.ErrorList {
	if accessor.GetExpression() == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return c.compile(accessor, opts, fldPath)
}

// validateVariables checks variable names and compiles their expressions,
// storing them in the compiler for the expressions that follow.
func validateVariables(c compiler, variables []admissionregistrationv1.Variable, opts cel.OptionalVariableDeclarations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, variable := range variables {
		p := fldPath.Index(i)
		switch {
		case variable.Name == "":
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		case !celIdentifier.MatchString(variable.Name):
			allErrs = append(allErrs, field.Invalid(p.Child("name"), variable.Name, "name is not a valid CEL identifier"))
		case names.Has(variable.Name):
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), variable.Name))
		}
		names.Insert(variable.Name)
		if strings.TrimSpace(variable.Expression) == "" {
			allErrs = append(allErrs, field.Required(p.Child("expression"), ""))
			continue
		}
		result := c.c.CompileAndStoreVariable(&validatingpolicy.Variable{Name: variable.Name, Expression: variable.Expression}, opts, c.envType(variable.Expression))
		if result.Error != nil {
			allErrs = append(allErrs, celFieldError(p.Child("expression"), variable.Expression, result.Error))
		}
	}
	return allErrs
}

// ValidateMutatingBinding validates a new binding of a mutating policy.
func (v *Validator) ValidateMutatingBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateMutatingBindingSpec(&b.Spec, field.NewPath("spec"))...)
}

// ValidateMutatingBindingUpdate validates an update of a binding as a new
// one, as Kubernetes does; the generic update path checks what may not
// change.
func (v *Validator) ValidateMutatingBindingUpdate(b, _ *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	return v.ValidateMutatingBinding(b)
}

func validateMutatingBindingSpec(spec *admissionregistrationv1.MutatingAdmissionPolicyBindingSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateBindingCommon(spec.PolicyName, spec.ParamRef, spec.MatchResources, fldPath)
	return append(allErrs, validateMutatingOperations(spec.MatchResources, fldPath.Child("matchResources"))...)
}

// MutatingPolicyStrategy implements the create, update and delete
// behaviour of MutatingAdmissionPolicies; the generation counts changes of
// the spec.
type MutatingPolicyStrategy struct {
	store.Strategy[*admissionregistrationv1.MutatingAdmissionPolicy]
}

// PrepareForCreate starts the generation at 1.
func (MutatingPolicyStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Generation = 1
}

// PrepareForUpdate bumps the generation when the spec changes.
func (MutatingPolicyStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	p, oldP := obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy)
	p.Generation = oldP.Generation
	if !equality.Semantic.DeepEqual(p.Spec, oldP.Spec) {
		p.Generation++
	}
}

// MutatingBindingStrategy implements the behaviour of bindings of mutating
// policies.
type MutatingBindingStrategy struct {
	store.Strategy[*admissionregistrationv1.MutatingAdmissionPolicyBinding]
}

// PrepareForCreate starts the generation at 1.
func (MutatingBindingStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Generation = 1
}

// PrepareForUpdate bumps the generation when the spec changes.
func (MutatingBindingStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	b, oldB := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding), old.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
	b.Generation = oldB.Generation
	if !equality.Semantic.DeepEqual(b.Spec, oldB.Spec) {
		b.Generation++
	}
}

// NewMutatingPolicyREST returns the storage of MutatingAdmissionPolicies.
func NewMutatingPolicyREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	v := NewValidator()
	return store.NewREST(optsGetter, store.Options{
		Resource:       admissionregistrationv1.Resource("mutatingadmissionpolicies"),
		Singular:       "mutatingadmissionpolicy",
		NewFunc:        func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
		NewListFunc:    func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} },
		Strategy:       MutatingPolicyStrategy{store.NewStrategy(scheme, store.ClusterScoped, v.ValidateMutatingPolicy, v.ValidateMutatingPolicyUpdate)},
		TableConvertor: MutatingPolicyTableConvertor(),
		Categories:     []string{category},
	})
}

// NewMutatingBindingREST returns the storage of
// MutatingAdmissionPolicyBindings.
func NewMutatingBindingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	v := NewValidator()
	return store.NewREST(optsGetter, store.Options{
		Resource:       admissionregistrationv1.Resource("mutatingadmissionpolicybindings"),
		Singular:       "mutatingadmissionpolicybinding",
		NewFunc:        func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} },
		NewListFunc:    func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBindingList{} },
		Strategy:       MutatingBindingStrategy{store.NewStrategy(scheme, store.ClusterScoped, v.ValidateMutatingBinding, v.ValidateMutatingBindingUpdate)},
		TableConvertor: MutatingBindingTableConvertor(),
		Categories:     []string{category},
	})
}
