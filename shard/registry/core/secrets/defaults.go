package secrets

import (
	corev1 "k8s.io/api/core/v1"
)

// SetDefaults sets the type of a secret without one to Opaque, and moves
// stringData into data (stringData wins on conflicts), since stringData is
// write-only and never stored.
func SetDefaults(secret *corev1.Secret) {
	if secret.Type == "" {
		secret.Type = corev1.SecretTypeOpaque
	}
	mergeStringData(secret)
}

// mergeStringData moves the entries of stringData into data and clears
// stringData.
func mergeStringData(secret *corev1.Secret) {
	if len(secret.StringData) == 0 {
		secret.StringData = nil
		return
	}
	if secret.Data == nil {
		secret.Data = make(map[string][]byte, len(secret.StringData))
	}
	for key, value := range secret.StringData {
		secret.Data[key] = []byte(value)
	}
	secret.StringData = nil
}
