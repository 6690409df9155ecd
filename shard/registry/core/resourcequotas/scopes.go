package resourcequotas

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tessera-dev/tessera/shard/registry/core/resourcename"
)

var standardScopes = map[corev1.ResourceQuotaScope]bool{
	corev1.ResourceQuotaScopeTerminating:               true,
	corev1.ResourceQuotaScopeNotTerminating:            true,
	corev1.ResourceQuotaScopeBestEffort:                true,
	corev1.ResourceQuotaScopeNotBestEffort:             true,
	corev1.ResourceQuotaScopePriorityClass:             true,
	corev1.ResourceQuotaScopeCrossNamespacePodAffinity: true,
	corev1.ResourceQuotaScopeVolumeAttributesClass:     true,
}

// conflictingScopes are the pairs of scopes no pod or claim can match at
// once.
var conflictingScopes = [][2]corev1.ResourceQuotaScope{
	{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
	{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
}

var (
	podCountResources   = map[corev1.ResourceName]bool{corev1.ResourcePods: true}
	podComputeResources = map[corev1.ResourceName]bool{
		corev1.ResourceCPU: true, corev1.ResourceMemory: true,
		corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true,
		corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true,
	}
	claimResources = map[corev1.ResourceName]bool{
		corev1.ResourcePersistentVolumeClaims: true, corev1.ResourceRequestsStorage: true,
	}
)

// scopeAppliesTo reports whether a quota with scope can track resource.
func scopeAppliesTo(scope corev1.ResourceQuotaScope, resource corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCountResources[resource] || podComputeResources[resource]
	case corev1.ResourceQuotaScopeBestEffort:
		return podCountResources[resource]
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return claimResources[resource]
	default:
		return true
	}
}

// hardNames returns the standard resource names of spec.hard, sorted.
func hardNames(spec *corev1.ResourceQuotaSpec) []corev1.ResourceName {
	var names []corev1.ResourceName
	for name := range spec.Hard {
		if resourcename.IsStandardQuota(name) {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

func validateScopes(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	if len(spec.Scopes) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	seen := map[corev1.ResourceQuotaScope]bool{}
	for _, scope := range spec.Scopes {
		if !standardScopes[scope] {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "unsupported scope"))
		}
		for _, name := range hardNames(spec) {
			if !scopeAppliesTo(scope, name) {
				allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
		seen[scope] = true
	}
	for _, pair := range conflictingScopes {
		if seen[pair[0]] && seen[pair[1]] {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "conflicting scopes"))
		}
	}
	return allErrs
}

func validateScopeSelector(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	if spec.ScopeSelector == nil {
		return nil
	}
	var allErrs field.ErrorList
	exprPath := fldPath.Child("matchExpressions")
	seen := map[corev1.ResourceQuotaScope]bool{}
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !standardScopes[req.ScopeName] {
			allErrs = append(allErrs, field.Invalid(exprPath.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, name := range hardNames(spec) {
			if !scopeAppliesTo(req.ScopeName, name) {
				allErrs = append(allErrs, field.Invalid(exprPath, spec.ScopeSelector, "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
			corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
			corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				allErrs = append(allErrs, field.Invalid(exprPath.Child("operator"), req.Operator,
					"must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				allErrs = append(allErrs, field.Required(exprPath.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				allErrs = append(allErrs, field.Invalid(exprPath.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			allErrs = append(allErrs, field.Invalid(exprPath.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		seen[req.ScopeName] = true
	}
	for _, pair := range conflictingScopes {
		if seen[pair[0]] && seen[pair[1]] {
			allErrs = append(allErrs, field.Invalid(exprPath, spec.ScopeSelector, "conflicting scopes"))
		}
	}
	return allErrs
}
