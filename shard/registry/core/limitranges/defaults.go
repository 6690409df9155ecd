package limitranges

import (
	corev1 "k8s.io/api/core/v1"
)

// SetDefaults fills in the defaults of the Container limits of a limit
// range: the default limit of a resource is its max, the default request is
// the default limit, or else the min.
func SetDefaults(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		setItemDefaults(&lr.Spec.Limits[i])
	}
}

func setItemDefaults(item *corev1.LimitRangeItem) {
	if item.Type != corev1.LimitTypeContainer {
		return
	}
	if item.Default == nil {
		item.Default = corev1.ResourceList{}
	}
	if item.DefaultRequest == nil {
		item.DefaultRequest = corev1.ResourceList{}
	}
	for name, max := range item.Max {
		if _, ok := item.Default[name]; !ok {
			item.Default[name] = max.DeepCopy()
		}
	}
	for name, limit := range item.Default {
		if _, ok := item.DefaultRequest[name]; !ok {
			item.DefaultRequest[name] = limit.DeepCopy()
		}
	}
	for name, min := range item.Min {
		if _, ok := item.DefaultRequest[name]; !ok {
			item.DefaultRequest[name] = min.DeepCopy()
		}
	}
}
