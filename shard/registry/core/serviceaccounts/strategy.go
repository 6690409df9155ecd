package serviceaccounts

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// EnforceMountableSecretsAnnotation is the deprecated annotation that limits
// the secrets pods of a service account may mount.
const EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"

// Strategy implements the create, update and delete behaviour of service
// accounts.
type Strategy struct {
	store.Strategy[*corev1.ServiceAccount]
}

// NewStrategy returns the strategy of service accounts, typing objects with
// typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.Namespaced, Validate, ValidateUpdate)}
}

// PrepareForCreate keeps only the names of secret references.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

// PrepareForUpdate keeps only the names of secret references.
func (Strategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

// cleanSecretReferences drops every field of the secret references except
// the name: the secrets are in the service account's namespace.
func cleanSecretReferences(sa *corev1.ServiceAccount) {
	for i, secret := range sa.Secrets {
		sa.Secrets[i] = corev1.ObjectReference{Name: secret.Name}
	}
}

// WarningsOnCreate warns about the deprecated mountable secrets annotation.
func (Strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*corev1.ServiceAccount))
}

// WarningsOnUpdate warns about the deprecated mountable secrets annotation
// when an update adds it.
func (Strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	if _, had := old.(*corev1.ServiceAccount).Annotations[EnforceMountableSecretsAnnotation]; had {
		return nil
	}
	return warnings(obj.(*corev1.ServiceAccount))
}

func warnings(sa *corev1.ServiceAccount) []string {
	if _, ok := sa.Annotations[EnforceMountableSecretsAnnotation]; ok {
		return []string{"metadata.annotations[" + EnforceMountableSecretsAnnotation + "]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"}
	}
	return nil
}
