// Package namespaces is the registry of core v1 namespaces: scheme
// registration, defaulting, the strategies of the namespace and of its status
// and finalize subresources, validation, storage with Kubernetes' two-phase
// deletion, and table printing.
package namespaces

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers Namespace and NamespaceList as core v1 kinds and as
// kinds of the core group's internal version, their defaulting, and the
// field selector labels of Namespace (metadata.name, name, status.phase).
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &corev1.Namespace{}, &corev1.NamespaceList{})
	}
	s.AddTypeDefaultingFunc(&corev1.Namespace{}, func(obj interface{}) { SetDefaults(obj.(*corev1.Namespace)) })
	s.AddTypeDefaultingFunc(&corev1.NamespaceList{}, func(obj interface{}) {
		list := obj.(*corev1.NamespaceList)
		for i := range list.Items {
			SetDefaults(&list.Items[i])
		}
	})
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Namespace"), ConvertFieldLabel); err != nil {
		return fmt.Errorf("registering Namespace field labels: %w", err)
	}
	return nil
}

// ConvertFieldLabel accepts the field selector labels of namespaces. "name"
// is a historical alias of metadata.name that clients still use.
func ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "status.phase", "metadata.name", "name":
		return label, value, nil
	default:
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
}
