package configmaps

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
)

// Strategy implements the create, update and delete behaviour of configmaps.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of configmaps, typing objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator}
}

// NamespaceScoped is true: configmaps live in namespaces.
func (Strategy) NamespaceScoped() bool { return true }

// PrepareForCreate has nothing to clear: configmaps have no status.
func (Strategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate has nothing to clear: configmaps have no status.
func (Strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new configmap.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return Validate(obj.(*corev1.ConfigMap))
}

// WarningsOnCreate returns no warnings.
func (Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (Strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: PUT does not create configmaps.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// ValidateUpdate validates an update, including immutability.
func (Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateUpdate(obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap))
}

// WarningsOnUpdate returns no warnings.
func (Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return true }
