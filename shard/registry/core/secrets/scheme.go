// Package secrets is the registry of core v1 secrets: scheme registration,
// defaulting, strategy, validation, storage and table printing.
package secrets

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers Secret and SecretList as core v1 kinds and as kinds
// of the core group's internal version, their defaulting, and the field
// selector labels of Secret (metadata.name, metadata.namespace, type).
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.Secret{}, &corev1.SecretList{})
	store.AddDefaulting(s, SetDefaults, func(l *corev1.SecretList) []corev1.Secret { return l.Items })
	return store.AddFieldLabels(s, corev1.SchemeGroupVersion, ConvertFieldLabel, "Secret")
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
