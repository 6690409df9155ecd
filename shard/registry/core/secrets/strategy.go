package secrets

import (
	"context"
	"crypto/tls"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/names"
)

// Strategy implements the create, update and delete behaviour of secrets.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of secrets, typing objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator}
}

// NamespaceScoped is true: secrets live in namespaces.
func (Strategy) NamespaceScoped() bool { return true }

// PrepareForCreate moves stringData into data.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	mergeStringData(obj.(*corev1.Secret))
}

// PrepareForUpdate moves stringData into data.
func (Strategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	mergeStringData(obj.(*corev1.Secret))
}

// Validate validates a new secret.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return Validate(obj.(*corev1.Secret))
}

// WarningsOnCreate warns about a TLS secret whose key does not match its
// certificate.
func (Strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*corev1.Secret))
}

// Canonicalize does nothing.
func (Strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: PUT does not create secrets.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// ValidateUpdate validates an update, including the immutability of type
// and of the data of immutable secrets.
func (Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateUpdate(obj.(*corev1.Secret), old.(*corev1.Secret))
}

// WarningsOnUpdate warns about a TLS secret whose key does not match its
// certificate.
func (Strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return warnings(obj.(*corev1.Secret))
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

func warnings(secret *corev1.Secret) []string {
	if secret.Type != corev1.SecretTypeTLS {
		return nil
	}
	if _, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// GetAttrs returns the labels and selectable fields of a secret.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return nil, nil, fmt.Errorf("not a secret: %T", obj)
	}
	return secret.Labels, SelectableFields(secret), nil
}

// SelectableFields returns the fields of a secret a field selector can
// match: metadata.name, metadata.namespace and type.
func SelectableFields(secret *corev1.Secret) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"type": string(secret.Type)}, &secret.ObjectMeta, true)
}
