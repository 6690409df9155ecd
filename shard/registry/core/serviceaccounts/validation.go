package serviceaccounts

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate validates a service account: its metadata, with a DNS subdomain
// as name.
func Validate(sa *corev1.ServiceAccount) field.ErrorList {
	return apivalidation.ValidateObjectMeta(&sa.ObjectMeta, true, apivalidation.ValidateServiceAccountName, field.NewPath("metadata"))
}

// ValidateUpdate validates an update of a service account.
func ValidateUpdate(sa, old *corev1.ServiceAccount) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, Validate(sa)...)
}
