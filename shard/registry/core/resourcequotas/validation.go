package resourcequotas

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tessera-dev/tessera/shard/registry/core/resourcename"
)

// Validate validates a resource quota: resource names and quantities of
// spec.hard and of the status, and the scopes and scope selector.
func Validate(rq *corev1.ResourceQuota) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&rq.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateSpec(&rq.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateStatus(&rq.Status, field.NewPath("status"))...)
}

// ValidateUpdate validates an update of a resource quota. As in
// Kubernetes, the set of scopes never changes, though its order may; the
// scope selector may change.
func ValidateUpdate(rq, old *corev1.ResourceQuota) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&rq.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateSpec(&rq.Spec, field.NewPath("spec"))...)
	if !sets.New(rq.Spec.Scopes...).Equal(sets.New(old.Spec.Scopes...)) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "scopes"), rq.Spec.Scopes, "field is immutable"))
	}
	return allErrs
}

// ValidateStatusUpdate validates a status update.
func ValidateStatusUpdate(rq, old *corev1.ResourceQuota) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&rq.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateStatus(&rq.Status, field.NewPath("status"))...)
}

func validateSpec(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateQuantities(spec.Hard, fldPath.Child("hard"))
	allErrs = append(allErrs, validateScopes(spec, fldPath.Child("scopes"))...)
	return append(allErrs, validateScopeSelector(spec, fldPath.Child("scopeSelector"))...)
}

func validateStatus(status *corev1.ResourceQuotaStatus, fldPath *field.Path) field.ErrorList {
	allErrs := validateQuantities(status.Hard, fldPath.Child("hard"))
	return append(allErrs, validateQuantities(status.Used, fldPath.Child("used"))...)
}

// validateQuantities checks quota resource names and that their quantities
// are non-negative, and whole for resources counted in units.
func validateQuantities(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for name, q := range list {
		path := fldPath.Key(string(name))
		allErrs = append(allErrs, resourcename.ValidateQuota(name, path)...)
		allErrs = append(allErrs, validateQuantity(name, q, path)...)
	}
	return allErrs
}

func validateQuantity(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if q.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q.String(), "must be greater than or equal to 0"))
	}
	if resourcename.IsInteger(name) && q.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q.String(), "must be an integer"))
	}
	return allErrs
}
