// Package configmaps is the registry of core v1 configmaps: scheme
// registration, strategy, validation, storage and table printing.
package configmaps

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers ConfigMap and ConfigMapList as core v1 kinds and as
// kinds of the core group's internal version, and the field selector labels
// of ConfigMap.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.ConfigMap{}, &corev1.ConfigMapList{})
	return store.AddFieldLabels(s, corev1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion, "ConfigMap")
}
