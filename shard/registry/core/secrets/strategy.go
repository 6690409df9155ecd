package secrets

import (
	"context"
	"crypto/tls"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of secrets.
type Strategy struct {
	store.Strategy[*corev1.Secret]
}

// NewStrategy returns the strategy of secrets, typing objects with typer.
// Updates are validated for the immutability of type and of the data of
// immutable secrets.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.Namespaced, Validate, ValidateUpdate)}
}

// PrepareForCreate moves stringData into data.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	mergeStringData(obj.(*corev1.Secret))
}

// PrepareForUpdate moves stringData into data.
func (Strategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	mergeStringData(obj.(*corev1.Secret))
}

// WarningsOnCreate warns about a TLS secret whose key does not match its
// certificate.
func (Strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*corev1.Secret))
}

// WarningsOnUpdate warns about a TLS secret whose key does not match its
// certificate.
func (Strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return warnings(obj.(*corev1.Secret))
}

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
	return store.Attrs(obj, SelectableFields)
}

// SelectableFields returns the fields of a secret a field selector can
// match: metadata.name, metadata.namespace and type.
func SelectableFields(secret *corev1.Secret) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"type": string(secret.Type)}, &secret.ObjectMeta, true)
}
