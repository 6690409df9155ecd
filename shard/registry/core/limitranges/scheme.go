// Package limitranges is the registry of core v1 limitranges: scheme
// registration, defaulting, strategy, validation, storage and table
// printing.
package limitranges

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers LimitRange and LimitRangeList as core v1 kinds and
// as kinds of the core group's internal version, their defaulting, and the
// field selector labels of LimitRange.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.LimitRange{}, &corev1.LimitRangeList{})
	store.AddDefaulting(s, SetDefaults, func(l *corev1.LimitRangeList) []corev1.LimitRange { return l.Items })
	return store.AddFieldLabels(s, corev1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion, "LimitRange")
}
