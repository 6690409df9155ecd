// Package serviceaccounts is the registry of core v1 serviceaccounts: scheme
// registration, strategy, validation, storage and table printing.
package serviceaccounts

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers ServiceAccount and ServiceAccountList as core v1
// kinds and as kinds of the core group's internal version, and the field
// selector labels of ServiceAccount. Service accounts have no defaults:
// automountServiceAccountToken stays unset unless the user sets it.
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &corev1.ServiceAccount{}, &corev1.ServiceAccountList{})
	}
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("ServiceAccount"), runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
		return fmt.Errorf("registering ServiceAccount field labels: %w", err)
	}
	return nil
}
