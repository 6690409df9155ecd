package webhookconfigurations

import (
	"errors"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// validateMatchConditions checks that match conditions have unique
// qualified names and boolean CEL expressions that compile with the
// variables webhooks see (object, oldObject, request, namespaceObject,
// authorizer).
func (v *Validator) validateMatchConditions(conditions []admissionregistrationv1.MatchCondition, o options, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(conditions) > MaxMatchConditions {
		allErrs = append(allErrs, field.TooMany(fldPath, len(conditions), MaxMatchConditions))
	}
	names := map[string]bool{}
	for i := range conditions {
		mc := &conditions[i]
		idxPath := fldPath.Index(i)
		if mc.Name == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(mc.Name) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), mc.Name, msg))
			}
			if names[mc.Name] {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), mc.Name))
			}
			names[mc.Name] = true
		}
		expression := strings.TrimSpace(mc.Expression)
		if expression == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("expression"), ""))
			continue
		}
		envType := environment.NewExpressions
		if o.storedExpressions[mc.Expression] {
			envType = environment.StoredExpressions
		}
		accessor := &matchconditions.MatchCondition{Name: mc.Name, Expression: expression}
		result := v.celCompiler().CompileCELExpression(accessor, plugincel.OptionalVariableDeclarations{HasAuthorizer: true}, envType)
		if result.Error != nil {
			allErrs = append(allErrs, celError(idxPath.Child("expression"), expression, result.Error))
		}
	}
	return allErrs
}

// celError turns a CEL compilation error into a validation error.
func celError(fldPath *field.Path, expression string, err error) *field.Error {
	var celErr *apiservercel.Error
	if !errors.As(err, &celErr) {
		return field.InternalError(fldPath, fmt.Errorf("compiling %q: %w", expression, err))
	}
	switch celErr.Type {
	case apiservercel.ErrorTypeRequired:
		return field.Required(fldPath, celErr.Detail)
	case apiservercel.ErrorTypeInvalid:
		return field.Invalid(fldPath, expression, celErr.Detail)
	default:
		return field.InternalError(fldPath, celErr)
	}
}
