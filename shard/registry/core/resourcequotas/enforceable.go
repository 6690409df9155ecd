package resourcequotas

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ObjectCountAliases are the legacy quota names that count objects of the
// core kinds a shard serves, as in Kubernetes (configmaps counts what
// count/configmaps counts).
var ObjectCountAliases = map[schema.GroupResource]corev1.ResourceName{
	corev1.Resource("configmaps"):     corev1.ResourceConfigMaps,
	corev1.Resource("secrets"):        corev1.ResourceSecrets,
	corev1.Resource("resourcequotas"): corev1.ResourceQuotas,
}

// CountPrefix starts the quota names that count objects of a resource:
// count/<resource>.<group>, or count/<resource> in the core group.
const CountPrefix = "count/"

// Enforceable reports whether a shard can enforce a quota on name: object
// counts only, since a logical cluster runs no pods and has no services
// or volumes whose compute, storage or load balancers could be counted.
func Enforceable(name corev1.ResourceName) bool {
	if strings.HasPrefix(string(name), CountPrefix) {
		return true
	}
	for _, alias := range ObjectCountAliases {
		if name == alias {
			return true
		}
	}
	return false
}

// ValidateEnforceable refuses what a shard could store but never enforce:
// names other than object counts, and scopes, which select pods and
// volume claims. Names and scopes kept from old are allowed, so that
// quotas stored before stay writable; the scope selector of a quota stored
// with scopes may change, as in Kubernetes. Kubernetes' own validation is
// Validate and ValidateUpdate; this is Tessera's, on top.
func ValidateEnforceable(rq, old *corev1.ResourceQuota) field.ErrorList {
	var allErrs field.ErrorList
	var names []string
	for name := range rq.Spec.Hard {
		if Enforceable(name) {
			continue
		}
		if old != nil {
			if _, kept := old.Spec.Hard[name]; kept {
				continue
			}
		}
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "hard").Key(name),
			"logical clusters run no pods and have no services or volumes: quotas count objects only (count/<resource>.<group>, configmaps, secrets, resourcequotas)"))
	}
	switch {
	case old == nil && (len(rq.Spec.Scopes) > 0 || rq.Spec.ScopeSelector != nil):
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "scopes"),
			"quota scopes select pods and volume claims, which logical clusters do not have"))
	case old != nil && len(old.Spec.Scopes) == 0 && old.Spec.ScopeSelector == nil && rq.Spec.ScopeSelector != nil:
		// Scopes never change (ValidateUpdate), but the selector may: a
		// quota stored without either does not get one.
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "scopeSelector"),
			"quota scopes select pods and volume claims, which logical clusters do not have"))
	}
	return allErrs
}
