// Package namespaces is the registry of core v1 namespaces: scheme
// registration, defaulting, the strategies of the namespace and of its status
// and finalize subresources, validation, storage with Kubernetes' two-phase
// deletion, and table printing.
package namespaces

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers Namespace and NamespaceList as core v1 kinds and as
// kinds of the core group's internal version, their defaulting, and the
// field selector labels of Namespace (metadata.name, name, status.phase).
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.Namespace{}, &corev1.NamespaceList{})
	store.AddDefaulting(s, SetDefaults, func(l *corev1.NamespaceList) []corev1.Namespace { return l.Items })
	return store.AddFieldLabels(s, corev1.SchemeGroupVersion, ConvertFieldLabel, "Namespace")
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
