// Package configmaps is the registry of core v1 configmaps: scheme
// registration, strategy, validation, storage and table printing.
package configmaps

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers ConfigMap and ConfigMapList as core v1 kinds and as
// kinds of the core group's internal version, and the field selector labels
// of ConfigMap.
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &corev1.ConfigMap{}, &corev1.ConfigMapList{})
	}
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("ConfigMap"), runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
		return fmt.Errorf("registering ConfigMap field labels: %w", err)
	}
	return nil
}
