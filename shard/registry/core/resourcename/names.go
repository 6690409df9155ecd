// Package resourcename classifies and validates the names of compute and
// quota resources ("cpu", "requests.memory", "example.com/gpu") used by
// limit ranges and resource quotas.
package resourcename

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	hugePagesPrefix         = "hugepages-"
	requestsHugePagesPrefix = corev1.DefaultResourceRequestsPrefix + hugePagesPrefix
	nativePrefix            = "kubernetes.io/"
)

var (
	standard = set(
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceStorage, corev1.ResourceRequestsStorage,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	standardContainer = set(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
	standardQuota     = set(
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	integer = set(
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
)

func set(names ...corev1.ResourceName) map[corev1.ResourceName]bool {
	m := make(map[corev1.ResourceName]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// IsHugePages reports whether name is a huge pages resource (hugepages-2Mi).
func IsHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), hugePagesPrefix)
}

// isQuotaHugePages reports whether name is a huge pages resource as quotas
// name them (hugepages-2Mi, requests.hugepages-2Mi).
func isQuotaHugePages(name corev1.ResourceName) bool {
	return IsHugePages(name) || strings.HasPrefix(string(name), requestsHugePagesPrefix)
}

// IsStandard reports whether name is a resource Kubernetes defines.
func IsStandard(name corev1.ResourceName) bool {
	return standard[name] || isQuotaHugePages(name)
}

// IsStandardContainer reports whether name is a standard resource of
// containers: cpu, memory, ephemeral-storage or huge pages.
func IsStandardContainer(name corev1.ResourceName) bool {
	return standardContainer[name] || IsHugePages(name)
}

// IsStandardQuota reports whether name is a standard resource of quotas.
func IsStandardQuota(name corev1.ResourceName) bool {
	return standardQuota[name] || isQuotaHugePages(name)
}

// IsNative reports whether name is a Kubernetes resource: unprefixed or in
// the kubernetes.io domain.
func IsNative(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), nativePrefix)
}

// IsExtended reports whether name is an extended resource
// (example.com/gpu): domain-prefixed, outside kubernetes.io, and usable in
// quotas as requests.<name>.
func IsExtended(name corev1.ResourceName) bool {
	if IsNative(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// IsInteger reports whether name is counted in whole units: object counts
// and extended resources.
func IsInteger(name corev1.ResourceName) bool {
	return integer[name] || IsExtended(name)
}

// IsOvercommitAllowed reports whether requests of name may be lower than
// its limits; not so for huge pages and extended resources.
func IsOvercommitAllowed(name corev1.ResourceName) bool {
	return IsNative(name) && !IsHugePages(name)
}

// Validate validates a resource name: a qualified name, standard unless it
// is domain-prefixed.
func Validate(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") && !IsStandard(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource type or fully qualified"))
	}
	return allErrs
}

// ValidateContainer validates the name of a container resource: a standard
// container resource, or a well-formed extended resource.
func ValidateContainer(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := Validate(name, fldPath)
	if !strings.Contains(string(name), "/") {
		if !IsStandardContainer(name) {
			allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
		}
	} else if !IsNative(name) && !IsExtended(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "doesn't follow extended resource name standard"))
	}
	return allErrs
}

// ValidateQuota validates the name of a quota resource: a standard quota
// resource, or a domain-prefixed one (count/deployments.apps,
// requests.example.com/gpu).
func ValidateQuota(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := Validate(name, fldPath)
	if !strings.Contains(string(name), "/") && !IsStandardQuota(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for quota"))
	}
	return allErrs
}
