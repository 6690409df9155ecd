// Package limitranges is the registry of core v1 limitranges: scheme
// registration, defaulting, strategy, validation, storage and table
// printing.
package limitranges

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers LimitRange and LimitRangeList as core v1 kinds and
// as kinds of the core group's internal version, their defaulting, and the
// field selector labels of LimitRange.
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &corev1.LimitRange{}, &corev1.LimitRangeList{})
	}
	s.AddTypeDefaultingFunc(&corev1.LimitRange{}, func(obj interface{}) { SetDefaults(obj.(*corev1.LimitRange)) })
	s.AddTypeDefaultingFunc(&corev1.LimitRangeList{}, func(obj interface{}) {
		list := obj.(*corev1.LimitRangeList)
		for i := range list.Items {
			SetDefaults(&list.Items[i])
		}
	})
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("LimitRange"), runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
		return fmt.Errorf("registering LimitRange field labels: %w", err)
	}
	return nil
}
