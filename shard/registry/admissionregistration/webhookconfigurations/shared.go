package webhookconfigurations

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks admission policies share with webhook configurations.

// ValidateRule validates the operations, groups, versions, resources and
// scope a rule matches, as for a webhook.
func ValidateRule(rule *admissionregistrationv1.RuleWithOperations, fldPath *field.Path) field.ErrorList {
	return validateRule(rule, fldPath)
}

// CELError turns a CEL compilation error into a validation error.
func CELError(fldPath *field.Path, expression string, err error) *field.Error {
	return celError(fldPath, expression, err)
}
