// Package secrets is the registry of core v1 secrets: scheme registration,
// defaulting, strategy, validation, storage and table printing.
package secrets

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers Secret and SecretList as core v1 kinds and as kinds
// of the core group's internal version, their defaulting, and the field
// selector labels of Secret (metadata.name, metadata.namespace, type).
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &corev1.Secret{}, &corev1.SecretList{})
	}
	s.AddTypeDefaultingFunc(&corev1.Secret{}, func(obj interface{}) { SetDefaults(obj.(*corev1.Secret)) })
	s.AddTypeDefaultingFunc(&corev1.SecretList{}, func(obj interface{}) {
		list := obj.(*corev1.SecretList)
		for i := range list.Items {
			SetDefaults(&list.Items[i])
		}
	})
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Secret"), ConvertFieldLabel); err != nil {
		return fmt.Errorf("registering Secret field labels: %w", err)
	}
	return nil
}

// ConvertFieldLabel accepts the field selector labels of secrets.
func ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "type", "metadata.name", "metadata.namespace":
		return label, value, nil
	default:
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
}
