package leases

import (
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate validates a lease.
func Validate(lease *coordinationv1.Lease) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&lease.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateSpec(&lease.Spec, field.NewPath("spec"))...)
}

// ValidateUpdate validates an update of a lease.
func ValidateUpdate(lease, old *coordinationv1.Lease) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&lease.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateSpec(&lease.Spec, field.NewPath("spec"))...)
}

// validateSpec checks a positive duration, non-negative transitions, a
// known or qualified strategy, and a preferred holder only with a strategy.
func validateSpec(spec *coordinationv1.LeaseSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.LeaseDurationSeconds != nil && *spec.LeaseDurationSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseDurationSeconds"), *spec.LeaseDurationSeconds, "must be greater than 0"))
	}
	if spec.LeaseTransitions != nil && *spec.LeaseTransitions < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseTransitions"), *spec.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		allErrs = append(allErrs, validateStrategy(*spec.Strategy, fldPath.Child("strategy"))...)
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return allErrs
}

// validateStrategy accepts the strategies Kubernetes defines and
// domain-prefixed custom ones. Kubernetes reports the errors on
// <fldPath>.strategy (spec.strategy.strategy, the path of the field in
// LeaseCandidate's spec as well): so does Tessera, for clients that match
// on the field.
func validateStrategy(strategy coordinationv1.CoordinatedLeaseStrategy, fldPath *field.Path) field.ErrorList {
	fldPath = fldPath.Child("strategy")
	if !strings.Contains(string(strategy), "/") {
		if strategy != coordinationv1.OldestEmulationVersion {
			return field.ErrorList{field.NotSupported(fldPath, strategy, []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion})}
		}
		return nil
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(strategy)) {
		allErrs = append(allErrs, field.Invalid(fldPath, strategy, msg))
	}
	return allErrs
}
