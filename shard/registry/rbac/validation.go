package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	genericvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateName validates the name of a role or binding: any name usable as
// a path segment, so that names like "system:node" work.
func ValidateName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// ValidateRole validates a role: metadata and rules.
func ValidateRole(role *rbacv1.Role) field.ErrorList {
	allErrs := genericvalidation.ValidateObjectMeta(&role.ObjectMeta, true, ValidateName, field.NewPath("metadata"))
	for i, rule := range role.Rules {
		allErrs = append(allErrs, ValidatePolicyRule(rule, true, field.NewPath("rules").Index(i))...)
	}
	return allErrs
}

// ValidateRoleUpdate validates an update of a role.
func ValidateRoleUpdate(role, old *rbacv1.Role) field.ErrorList {
	allErrs := ValidateRole(role)
	return append(allErrs, genericvalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// ValidateClusterRole validates a cluster role: metadata, rules, and the
// label selectors of its aggregation rule.
func ValidateClusterRole(role *rbacv1.ClusterRole) field.ErrorList {
	allErrs := genericvalidation.ValidateObjectMeta(&role.ObjectMeta, false, ValidateName, field.NewPath("metadata"))
	for i, rule := range role.Rules {
		allErrs = append(allErrs, ValidatePolicyRule(rule, false, field.NewPath("rules").Index(i))...)
	}
	if role.AggregationRule != nil {
		selectorsPath := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(role.AggregationRule.ClusterRoleSelectors) == 0 {
			allErrs = append(allErrs, field.Required(selectorsPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range role.AggregationRule.ClusterRoleSelectors {
			selector := &role.AggregationRule.ClusterRoleSelectors[i]
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, selectorsPath.Index(i))...)
			if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
				allErrs = append(allErrs, field.Invalid(selectorsPath.Index(i), selector, "invalid label selector."))
			}
		}
	}
	return allErrs
}

// ValidateClusterRoleUpdate validates an update of a cluster role.
func ValidateClusterRoleUpdate(role, old *rbacv1.ClusterRole) field.ErrorList {
	allErrs := ValidateClusterRole(role)
	return append(allErrs, genericvalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// ValidatePolicyRule validates a rule: it needs verbs, and either
// nonResourceURLs (cluster roles only, without resources) or apiGroups and
// resources.
func ValidatePolicyRule(rule rbacv1.PolicyRule, namespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Verbs) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return allErrs
	}
	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	}
	return allErrs
}

// ValidateRoleBinding validates a role binding: a Role or ClusterRole of
// the RBAC group, and its subjects.
func ValidateRoleBinding(rb *rbacv1.RoleBinding) field.ErrorList {
	allErrs := genericvalidation.ValidateObjectMeta(&rb.ObjectMeta, true, ValidateName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRoleRef(rb.RoleRef, []string{"Role", "ClusterRole"})...)
	for i, subject := range rb.Subjects {
		allErrs = append(allErrs, ValidateSubject(subject, true, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

// ValidateRoleBindingUpdate validates an update of a role binding: its
// roleRef never changes.
func ValidateRoleBindingUpdate(rb, old *rbacv1.RoleBinding) field.ErrorList {
	allErrs := ValidateRoleBinding(rb)
	allErrs = append(allErrs, genericvalidation.ValidateObjectMetaUpdate(&rb.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	if rb.RoleRef != old.RoleRef {
		allErrs = append(allErrs, field.Invalid(field.NewPath("roleRef"), rb.RoleRef, "cannot change roleRef"))
	}
	return allErrs
}

// ValidateClusterRoleBinding validates a cluster role binding: a
// ClusterRole of the RBAC group, and its subjects, service accounts with
// their namespace.
func ValidateClusterRoleBinding(crb *rbacv1.ClusterRoleBinding) field.ErrorList {
	allErrs := genericvalidation.ValidateObjectMeta(&crb.ObjectMeta, false, ValidateName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRoleRef(crb.RoleRef, []string{"ClusterRole"})...)
	for i, subject := range crb.Subjects {
		allErrs = append(allErrs, ValidateSubject(subject, false, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

// ValidateClusterRoleBindingUpdate validates an update of a cluster role
// binding: its roleRef never changes.
func ValidateClusterRoleBindingUpdate(crb, old *rbacv1.ClusterRoleBinding) field.ErrorList {
	allErrs := ValidateClusterRoleBinding(crb)
	allErrs = append(allErrs, genericvalidation.ValidateObjectMetaUpdate(&crb.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	if crb.RoleRef != old.RoleRef {
		allErrs = append(allErrs, field.Invalid(field.NewPath("roleRef"), crb.RoleRef, "cannot change roleRef"))
	}
	return allErrs
}

func validateRoleRef(ref rbacv1.RoleRef, kinds []string) field.ErrorList {
	var allErrs field.ErrorList
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		allErrs = append(allErrs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kindOK := false
	for _, k := range kinds {
		kindOK = kindOK || ref.Kind == k
	}
	if !kindOK {
		allErrs = append(allErrs, field.NotSupported(refPath.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range ValidateName(ref.Name, false) {
			allErrs = append(allErrs, field.Invalid(refPath.Child("name"), ref.Name, msg))
		}
	}
	return allErrs
}

// ValidateSubject validates a subject of a binding: a User or Group of the
// RBAC group, or a ServiceAccount of the core group with a valid name and,
// in cluster role bindings, a namespace.
func ValidateSubject(subject rbacv1.Subject, namespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if subject.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	switch subject.Kind {
	case rbacv1.ServiceAccountKind:
		if subject.Name != "" {
			for _, msg := range genericvalidation.ValidateServiceAccountName(subject.Name, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), subject.Name, msg))
			}
		}
		if subject.APIGroup != "" {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), subject.APIGroup, []string{""}))
		}
		if !namespaced && subject.Namespace == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if subject.APIGroup != rbacv1.GroupName {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), subject.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), subject.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return allErrs
}
