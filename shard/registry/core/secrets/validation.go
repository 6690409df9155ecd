package secrets

import (
	"encoding/json"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate validates a secret: metadata, key names, a total size of at most
// 1 MiB, and the keys and annotations its type requires.
func Validate(secret *corev1.Secret) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&secret.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))

	dataPath := field.NewPath("data")
	totalSize := 0
	for key, value := range secret.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, msg))
		}
		totalSize += len(value)
	}
	if totalSize > corev1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}

	switch secret.Type {
	case corev1.SecretTypeServiceAccountToken:
		// The uid annotation and the token are added later by a controller;
		// the service account's name is required up front.
		if secret.Annotations[corev1.ServiceAccountNameKey] == "" {
			allErrs = append(allErrs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		allErrs = append(allErrs, validateJSONKey(secret, corev1.DockerConfigKey, dataPath)...)
	case corev1.SecretTypeDockerConfigJson:
		allErrs = append(allErrs, validateJSONKey(secret, corev1.DockerConfigJsonKey, dataPath)...)
	case corev1.SecretTypeBasicAuth:
		_, hasUsername := secret.Data[corev1.BasicAuthUsernameKey]
		_, hasPassword := secret.Data[corev1.BasicAuthPasswordKey]
		// Either may be empty, but one of them must be present.
		if !hasUsername && !hasPassword {
			allErrs = append(allErrs,
				field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(secret.Data[corev1.SSHAuthPrivateKey]) == 0 {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if _, ok := secret.Data[corev1.TLSCertKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSCertKey), ""))
		}
		if _, ok := secret.Data[corev1.TLSPrivateKeyKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return allErrs
}

// validateJSONKey requires key in the secret's data, holding a JSON object.
func validateJSONKey(secret *corev1.Secret, key string, dataPath *field.Path) field.ErrorList {
	value, ok := secret.Data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	if err := json.Unmarshal(value, &map[string]interface{}{}); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

// ValidateUpdate validates an update of a secret: the type never changes,
// and an immutable secret keeps its data and stays immutable.
func ValidateUpdate(secret, old *corev1.Secret) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&secret.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(secret.Type, old.Type, field.NewPath("type"))...)
	if old.Immutable != nil && *old.Immutable {
		if secret.Immutable == nil || !*secret.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(secret.Data, old.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, Validate(secret)...)
}
