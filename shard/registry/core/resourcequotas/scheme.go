// Package resourcequotas is the registry of core v1 resourcequotas: scheme
// registration, the strategies of the quota and its status subresource,
// validation, storage and table printing.
package resourcequotas

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers ResourceQuota and ResourceQuotaList as core v1
// kinds and as kinds of the core group's internal version, and the field
// selector labels of ResourceQuota.
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &corev1.ResourceQuota{}, &corev1.ResourceQuotaList{})
	}
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("ResourceQuota"), runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
		return fmt.Errorf("registering ResourceQuota field labels: %w", err)
	}
	return nil
}
