package bootstrap

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// autoUpdate tells whether Ensure may change an existing default object.
func autoUpdate(m metav1.Object) bool {
	return m.GetAnnotations()[AutoUpdateAnnotationKey] != "false"
}

// reconcileClusterRole returns existing with what desired adds: the rules
// existing does not cover, missing aggregation selectors, labels and
// annotations; and whether anything changed. existing is not modified.
func reconcileClusterRole(existing, desired *rbacv1.ClusterRole) (*rbacv1.ClusterRole, bool) {
	if !autoUpdate(existing) {
		return existing, false
	}
	out := existing.DeepCopy()
	changed := mergeMeta(&out.ObjectMeta, &desired.ObjectMeta)

	// Aggregated roles get their rules from the aggregation controller;
	// adding rules here would only fight it.
	if desired.AggregationRule != nil {
		if out.AggregationRule == nil {
			out.AggregationRule = &rbacv1.AggregationRule{}
		}
		for _, sel := range desired.AggregationRule.ClusterRoleSelectors {
			if !slices.ContainsFunc(out.AggregationRule.ClusterRoleSelectors, func(s metav1.LabelSelector) bool {
				return equality.Semantic.DeepEqual(s, sel)
			}) {
				out.AggregationRule.ClusterRoleSelectors = append(out.AggregationRule.ClusterRoleSelectors, *sel.DeepCopy())
				changed = true
			}
		}
		return out, changed
	}
	for _, r := range desired.Rules {
		if covered, _ := rbac.Covers(out.Rules, []rbacv1.PolicyRule{r}); !covered {
			out.Rules = append(out.Rules, *r.DeepCopy())
			changed = true
		}
	}
	return out, changed
}

// bindingChange is what reconcileClusterRoleBinding decided.
type bindingChange int

const (
	bindingUnchanged bindingChange = iota
	// bindingUpdate: update the binding to the returned object.
	bindingUpdate
	// bindingRecreate: the role reference, which cannot be updated,
	// differs; delete the binding and create the returned object.
	bindingRecreate
)

// reconcileClusterRoleBinding returns existing with the subjects, labels
// and annotations desired adds, or desired itself (with existing's extra
// subjects) when the role reference differs. existing is not modified.
func reconcileClusterRoleBinding(existing, desired *rbacv1.ClusterRoleBinding) (*rbacv1.ClusterRoleBinding, bindingChange) {
	if !autoUpdate(existing) {
		return existing, bindingUnchanged
	}
	if existing.RoleRef != desired.RoleRef {
		out := desired.DeepCopy()
		mergeSubjects(&out.Subjects, existing.Subjects)
		mergeMeta(&out.ObjectMeta, &existing.ObjectMeta)
		return out, bindingRecreate
	}
	out := existing.DeepCopy()
	changed := mergeMeta(&out.ObjectMeta, &desired.ObjectMeta)
	if mergeSubjects(&out.Subjects, desired.Subjects) {
		changed = true
	}
	if !changed {
		return existing, bindingUnchanged
	}
	return out, bindingUpdate
}

// mergeSubjects appends the subjects of add that subjects lacks.
func mergeSubjects(subjects *[]rbacv1.Subject, add []rbacv1.Subject) bool {
	changed := false
	for _, s := range add {
		if !slices.ContainsFunc(*subjects, func(e rbacv1.Subject) bool {
			return e.Kind == s.Kind && e.Name == s.Name && e.Namespace == s.Namespace
		}) {
			*subjects = append(*subjects, s)
			changed = true
		}
	}
	return changed
}

// mergeMeta adds the labels and annotations of add that m, a copy the
// caller owns, lacks; values m has already are kept.
func mergeMeta(m, add *metav1.ObjectMeta) bool {
	labels, annotations := mergeMap(&m.Labels, add.Labels), mergeMap(&m.Annotations, add.Annotations)
	return labels || annotations
}

// mergeMap adds the keys of src that dst lacks.
func mergeMap(dst *map[string]string, src map[string]string) bool {
	changed := false
	for k, v := range src {
		if _, ok := (*dst)[k]; ok {
			continue
		}
		if *dst == nil {
			*dst = map[string]string{}
		}
		(*dst)[k] = v
		changed = true
	}
	return changed
}
