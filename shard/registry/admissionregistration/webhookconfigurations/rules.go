package webhookconfigurations

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateRule validates the operations, groups, versions, resources and
// scope a webhook rule matches.
func validateRule(rule *admissionregistrationv1.RuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	opsPath := fldPath.Child("operations")
	if len(rule.Operations) == 0 {
		allErrs = append(allErrs, field.Required(opsPath, ""))
	}
	if len(rule.Operations) > 1 && slices.Contains(rule.Operations, admissionregistrationv1.OperationAll) {
		allErrs = append(allErrs, field.Invalid(opsPath, rule.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range rule.Operations {
		if !slices.Contains(operations, string(op)) {
			allErrs = append(allErrs, field.NotSupported(opsPath.Index(i), op, operations))
		}
	}

	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), ""))
	}
	if len(rule.APIGroups) > 1 && slices.Contains(rule.APIGroups, "*") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	// The core group is "", so an empty group is fine; an empty version
	// is not.
	if len(rule.APIVersions) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiVersions"), ""))
	}
	if len(rule.APIVersions) > 1 && slices.Contains(rule.APIVersions, "*") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiVersions"), rule.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, version := range rule.APIVersions {
		if version == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("apiVersions").Index(i), ""))
		}
	}
	allErrs = append(allErrs, validateResources(rule.Resources, fldPath.Child("resources"))...)
	if rule.Scope != nil && !slices.Contains(scopes, string(*rule.Scope)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scope"), *rule.Scope, scopes))
	}
	return allErrs
}

// validateResources validates the resources of a rule: "x", "x/sub",
// "x/*", "*/sub", "*" and "*/*", without entries that wildcards already
// cover.
func validateResources(resources []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	resourcesWithAllSubresources := map[string]bool{} // x/*
	subresourcesOfAllResources := map[string]bool{}   // */x
	hasAllOfAll, hasAll, hasPlainResource := false, false, false
	for i, entry := range resources {
		if entry == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
			continue
		}
		hasAllOfAll = hasAllOfAll || entry == "*/*"
		hasAll = hasAll || entry == "*"
		res, sub, hasSub := strings.Cut(entry, "/")
		if !hasSub {
			hasPlainResource = hasPlainResource || entry != "*"
			continue
		}
		if resourcesWithAllSubresources[res] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), entry, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, entry)))
		}
		if subresourcesOfAllResources[sub] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), entry, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, entry)))
		}
		if sub == "*" {
			resourcesWithAllSubresources[res] = true
		}
		if res == "*" {
			subresourcesOfAllResources[sub] = true
		}
	}
	if len(resources) > 1 && hasAllOfAll {
		allErrs = append(allErrs, field.Invalid(fldPath, resources, "if '*/*' is present, must not specify other resources"))
	}
	if hasAll && hasPlainResource {
		allErrs = append(allErrs, field.Invalid(fldPath, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return allErrs
}
