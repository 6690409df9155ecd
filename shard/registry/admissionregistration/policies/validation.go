package policies

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tessera-dev/tessera/shard/registry/admissionregistration/webhookconfigurations"
)

// Limits Kubernetes sets on policies.
const (
	maxMatchConditions = 64
)

var (
	failurePolicies      = []string{string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore)}
	matchPolicies        = []string{string(admissionregistrationv1.Equivalent), string(admissionregistrationv1.Exact)}
	validationActions    = []string{string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit)}
	paramNotFoundActions = []string{string(admissionregistrationv1.AllowAction), string(admissionregistrationv1.DenyAction)}
	reasons              = []string{string(metav1.StatusReasonUnauthorized), string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge)}
	// celIdentifier is what a variable may be named: a CEL identifier.
	celIdentifier = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
)

// Validator validates policies and bindings. It compiles their CEL
// expressions with a compiler environment built on first use.
type Validator struct {
	once sync.Once
	env  *environment.EnvSet
}

// NewValidator returns a validator of policies and bindings.
func NewValidator() *Validator { return &Validator{} }

func (v *Validator) envSet() *environment.EnvSet {
	v.once.Do(func() { v.env = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()) })
	return v.env
}

// ValidatePolicy validates a new policy.
func (v *Validator) ValidatePolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, v.validatePolicySpec(p.Name, &p.Spec, nil, false, field.NewPath("spec"))...)
}

// ValidatePolicyUpdate validates an update of a policy as Kubernetes does:
// the metadata as on create (the generic update path checks what may not
// change), expressions the stored policy already has in the more
// permissive environment of stored expressions, and match conditions not
// at all when they and the paramKind are kept, so that a newer server
// never locks a stored policy.
func (v *Validator) ValidatePolicyUpdate(p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	keep := keepsMatchConditions(p.Spec.ParamKind, old.Spec.ParamKind, p.Spec.MatchConditions, old.Spec.MatchConditions)
	return append(allErrs, v.validatePolicySpec(p.Name, &p.Spec, storedExpressions(&old.Spec), keep, field.NewPath("spec"))...)
}

// keepsMatchConditions reports whether an update keeps the paramKind and
// the match conditions of the stored policy.
func keepsMatchConditions(paramKind, oldParamKind *admissionregistrationv1.ParamKind, conditions, oldConditions []admissionregistrationv1.MatchCondition) bool {
	return equality.Semantic.DeepEqual(paramKind, oldParamKind) && equality.Semantic.DeepEqual(conditions, oldConditions)
}

// ValidatePolicyStatusUpdate validates a status update of a policy.
func ValidatePolicyStatusUpdate(p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, metav1validation.ValidateConditions(p.Status.Conditions, field.NewPath("status", "conditions"))...)
}

// storedExpressions returns every CEL expression of a stored policy spec.
func storedExpressions(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec) sets.Set[string] {
	s := sets.New[string]()
	for _, mc := range spec.MatchConditions {
		s.Insert(mc.Expression)
	}
	for _, val := range spec.Validations {
		s.Insert(val.Expression, val.MessageExpression)
	}
	for _, a := range spec.AuditAnnotations {
		s.Insert(a.ValueExpression)
	}
	for _, vr := range spec.Variables {
		s.Insert(vr.Expression)
	}
	return s
}

// compiler compiles the expressions of one policy: its variables first,
// so that the other expressions can use them.
type compiler struct {
	c      *plugincel.CompositedCompiler
	stored sets.Set[string]
}

func (c compiler) envType(expression string) environment.Type {
	if c.stored.Has(expression) {
		return environment.StoredExpressions
	}
	return environment.NewExpressions
}

// compile compiles one expression and returns its error as a field error.
func (c compiler) compile(accessor plugincel.ExpressionAccessor, opts plugincel.OptionalVariableDeclarations, fldPath *field.Path) field.ErrorList {
	result := c.c.CompileCELExpression(accessor, opts, c.envType(accessor.GetExpression()))
	if result.Error != nil {
		return field.ErrorList{celFieldError(fldPath, accessor.GetExpression(), result.Error)}
	}
	return nil
}

func (v *Validator) validatePolicySpec(name string, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, stored sets.Set[string], skipMatchConditions bool, fldPath *field.Path) field.ErrorList {
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
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("validations"), "validations or auditAnnotations must contain at least one item"),
			field.Required(fldPath.Child("auditAnnotations"), "validations or auditAnnotations must contain at least one item"))
	}

	cc, err := plugincel.NewCompositedCompiler(v.envSet())
	if err != nil {
		return append(allErrs, field.InternalError(fldPath, err))
	}
	c := compiler{c: cc, stored: stored}
	hasParams := spec.ParamKind != nil
	opts := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}

	allErrs = append(allErrs, validateVariables(c, spec.Variables, opts, fldPath.Child("variables"))...)

	if !skipMatchConditions {
		allErrs = append(allErrs, validateMatchConditions(c, spec.MatchConditions, opts, fldPath.Child("matchConditions"))...)
	}

	for i, val := range spec.Validations {
		p := fldPath.Child("validations").Index(i)
		if strings.TrimSpace(val.Expression) == "" {
			allErrs = append(allErrs, field.Required(p.Child("expression"), "expression is not specified"))
		} else {
			allErrs = append(allErrs, c.compile(&validatingpolicy.ValidationCondition{Expression: val.Expression}, opts, p.Child("expression"))...)
		}
		if strings.ContainsAny(val.Message, "\r\n") {
			allErrs = append(allErrs, field.Invalid(p.Child("message"), val.Message, "message must not contain line breaks"))
		} else if len(val.Message) > 0 && strings.TrimSpace(val.Message) == "" {
			allErrs = append(allErrs, field.Invalid(p.Child("message"), val.Message, "message must be non-empty if specified"))
		}
		if val.MessageExpression != "" {
			if strings.TrimSpace(val.MessageExpression) == "" {
				allErrs = append(allErrs, field.Required(p.Child("messageExpression"), "must be non-empty if specified"))
			} else {
				msgOpts := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: false}
				allErrs = append(allErrs, c.compile(&validatingpolicy.MessageExpressionCondition{MessageExpression: val.MessageExpression}, msgOpts, p.Child("messageExpression"))...)
			}
		}
		if val.Reason != nil && !slices.Contains(reasons, string(*val.Reason)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("reason"), *val.Reason, reasons))
		}
	}

	keys := sets.New[string]()
	for i, a := range spec.AuditAnnotations {
		p := fldPath.Child("auditAnnotations").Index(i)
		if a.Key == "" {
			allErrs = append(allErrs, field.Required(p.Child("key"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(name + "/" + a.Key) {
				allErrs = append(allErrs, field.Invalid(p.Child("key"), a.Key, msg))
			}
			if keys.Has(a.Key) {
				allErrs = append(allErrs, field.Duplicate(p.Child("key"), a.Key))
			}
			keys.Insert(a.Key)
		}
		if strings.TrimSpace(a.ValueExpression) == "" {
			allErrs = append(allErrs, field.Required(p.Child("valueExpression"), "valueExpression is not specified"))
		} else {
			allErrs = append(allErrs, c.compile(&validatingpolicy.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}, opts, p.Child("valueExpression"))...)
		}
	}
	return allErrs
}

// celFieldError turns a CEL compilation error into a field error.
func celFieldError(fldPath *field.Path, expression string, err error) *field.Error {
	return webhookconfigurations.CELError(fldPath, expression, err)
}

// validateMatchConditions checks that match conditions have unique
// qualified names and boolean expressions that compile.
func validateMatchConditions(c compiler, conditions []admissionregistrationv1.MatchCondition, opts plugincel.OptionalVariableDeclarations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(conditions) > maxMatchConditions {
		allErrs = append(allErrs, field.TooMany(fldPath, len(conditions), maxMatchConditions))
	}
	names := sets.New[string]()
	for i, mc := range conditions {
		p := fldPath.Index(i)
		if mc.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(mc.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), mc.Name, msg))
			}
			if names.Has(mc.Name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), mc.Name))
			}
			names.Insert(mc.Name)
		}
		if strings.TrimSpace(mc.Expression) == "" {
			allErrs = append(allErrs, field.Required(p.Child("expression"), ""))
			continue
		}
		allErrs = append(allErrs, c.compile(&matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}, opts, p.Child("expression"))...)
	}
	return allErrs
}

// validateParamKind checks the apiVersion and kind of a policy's params.
func validateParamKind(pk *admissionregistrationv1.ParamKind, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if pk.APIVersion == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiVersion"), ""))
	} else if gv, err := schema.ParseGroupVersion(pk.APIVersion); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else {
		if gv.Group != "" {
			for _, msg := range validation.IsDNS1123Subdomain(gv.Group) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("apiVersion"), gv.Group, msg))
			}
		}
		for _, msg := range validation.IsDNS1035Label(gv.Version) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("apiVersion"), gv.Version, msg))
		}
	}
	if pk.Kind == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("kind"), ""))
	} else {
		for _, msg := range validation.IsDNS1035Label(strings.ToLower(pk.Kind)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("kind"), pk.Kind, msg))
		}
	}
	return allErrs
}

// validateMatchResources checks match resources; a policy's must name the
// resources it matches, a binding's may narrow them or not.
func validateMatchResources(m *admissionregistrationv1.MatchResources, requireRules bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	selectorOpts := metav1validation.LabelSelectorValidationOptions{}
	if m.NamespaceSelector == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("namespaceSelector"), ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, selectorOpts, fldPath.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("objectSelector"), ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(m.ObjectSelector, selectorOpts, fldPath.Child("objectSelector"))...)
	}
	if m.MatchPolicy == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("matchPolicy"), ""))
	} else if !slices.Contains(matchPolicies, string(*m.MatchPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("matchPolicy"), *m.MatchPolicy, matchPolicies))
	}
	if requireRules && len(m.ResourceRules) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resourceRules"), ""))
	}
	allErrs = append(allErrs, validateNamedRules(m.ResourceRules, fldPath.Child("resourceRules"))...)
	allErrs = append(allErrs, validateNamedRules(m.ExcludeResourceRules, fldPath.Child("excludeResourceRules"))...)
	return allErrs
}

func validateNamedRules(rules []admissionregistrationv1.NamedRuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := range rules {
		p := fldPath.Index(i)
		seen := sets.New[string]()
		for j, n := range rules[i].ResourceNames {
			for _, msg := range apivalidation.NameIsDNSSubdomain(n, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("resourceNames").Index(j), n, msg))
			}
			if seen.Has(n) {
				allErrs = append(allErrs, field.Duplicate(p.Child("resourceNames").Index(j), n))
			}
			seen.Insert(n)
		}
		allErrs = append(allErrs, webhookconfigurations.ValidateRule(&rules[i].RuleWithOperations, p)...)
	}
	return allErrs
}

// ValidateBinding validates a new binding.
func (v *Validator) ValidateBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateBindingSpec(&b.Spec, field.NewPath("spec"))...)
}

// ValidateBindingUpdate validates an update of a binding as a new one, as
// Kubernetes does; the generic update path checks what may not change.
func (v *Validator) ValidateBindingUpdate(b, _ *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	return v.ValidateBinding(b)
}

// validateBindingCommon checks what bindings of validating and mutating
// policies share: the policy's name, the param reference and the match
// resources.
func validateBindingCommon(policyName string, paramRef *admissionregistrationv1.ParamRef, match *admissionregistrationv1.MatchResources, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if policyName == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("policyName"), ""))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(policyName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("policyName"), policyName, msg))
		}
	}
	if paramRef != nil {
		allErrs = append(allErrs, validateParamRef(paramRef, fldPath.Child("paramRef"))...)
	}
	if match != nil {
		allErrs = append(allErrs, validateMatchResources(match, false, fldPath.Child("matchResources"))...)
	}
	return allErrs
}

func validateBindingSpec(spec *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateBindingCommon(spec.PolicyName, spec.ParamRef, spec.MatchResources, fldPath)
	actionsPath := fldPath.Child("validationActions")
	if len(spec.ValidationActions) == 0 {
		allErrs = append(allErrs, field.Required(actionsPath, ""))
	}
	seen := sets.New[string]()
	for i, a := range spec.ValidationActions {
		switch {
		case !slices.Contains(validationActions, string(a)):
			allErrs = append(allErrs, field.NotSupported(actionsPath.Index(i), a, validationActions))
		case seen.Has(string(a)):
			allErrs = append(allErrs, field.Duplicate(actionsPath.Index(i), a))
		}
		seen.Insert(string(a))
	}
	if seen.Has(string(admissionregistrationv1.Deny)) && seen.Has(string(admissionregistrationv1.Warn)) {
		allErrs = append(allErrs, field.Invalid(actionsPath, spec.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	return allErrs
}

func validateParamRef(ref *admissionregistrationv1.ParamRef, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case ref.Name != "" && ref.Selector != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("name"), "name and selector are mutually exclusive"),
			field.Forbidden(fldPath.Child("selector"), "name and selector are mutually exclusive"))
	case ref.Name == "" && ref.Selector == nil:
		allErrs = append(allErrs, field.Required(fldPath, "one of name or selector must be specified"))
	}
	if ref.Name != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(ref.Name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), ref.Name, msg))
		}
	}
	if ref.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(ref.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	if ref.Namespace != "" {
		for _, msg := range apivalidation.ValidateNamespaceName(ref.Namespace, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), ref.Namespace, msg))
		}
	}
	if ref.ParameterNotFoundAction == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("parameterNotFoundAction"), ""))
	} else if !slices.Contains(paramNotFoundActions, string(*ref.ParameterNotFoundAction)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("parameterNotFoundAction"), *ref.ParameterNotFoundAction, paramNotFoundActions))
	}
	return allErrs
}
