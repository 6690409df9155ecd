package policies

import (
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

var (
	envOnce sync.Once
	envSet  *environment.EnvSet
)

// baseEnv is the CEL environment policies compile in, built once.
func baseEnv() *environment.EnvSet {
	envOnce.Do(func() { envSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()) })
	return envSet
}

// compile compiles a policy into the evaluator upstream's dispatcher runs,
// as upstream's plugin does: variables first, then the validations, match
// conditions, audit annotations (with the authorizer variable) and message
// expressions (without). A compilation error is kept in the validator and
// applied with the policy's failurePolicy.
func compile(policy *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParams := policy.Spec.ParamKind != nil
	opts := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	messageOpts := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: false}
	failurePolicy := policy.Spec.FailurePolicy
	c, err := plugincel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, failurePolicy, err)
	}
	variables := make([]plugincel.NamedExpressionAccessor, len(policy.Spec.Variables))
	for i, v := range policy.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	c.CompileAndStoreVariables(variables, opts, environment.StoredExpressions)

	var matcher matchconditions.Matcher
	if mcs := policy.Spec.MatchConditions; len(mcs) > 0 {
		accessors := make([]plugincel.ExpressionAccessor, len(mcs))
		for i := range mcs {
			accessors[i] = (*matchconditions.MatchCondition)(&mcs[i])
		}
		matcher = matchconditions.NewMatcher(c.CompileCondition(accessors, opts, environment.StoredExpressions), failurePolicy, "policy", "validate", policy.Name)
	}
	validations := make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	for i, v := range policy.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	annotations := make([]plugincel.ExpressionAccessor, len(policy.Spec.AuditAnnotations))
	for i, a := range policy.Spec.AuditAnnotations {
		annotations[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(
		c.CompileCondition(validations, opts, environment.StoredExpressions),
		matcher,
		c.CompileCondition(annotations, opts, environment.StoredExpressions),
		c.CompileCondition(messages, messageOpts, environment.StoredExpressions),
		failurePolicy,
		nil,
	)
}
