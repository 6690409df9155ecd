package limitranges

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
)

// Strategy implements the create, update and delete behaviour of limit
// ranges.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of limit ranges, typing objects with
// typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator}
}

// NamespaceScoped is true: limit ranges live in namespaces.
func (Strategy) NamespaceScoped() bool { return true }

// PrepareForCreate does nothing: limit ranges have no status.
func (Strategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: limit ranges have no status.
func (Strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new limit range.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return Validate(obj.(*corev1.LimitRange))
}

// WarningsOnCreate returns no warnings.
func (Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (Strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is true: PUT creates a missing limit range.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return true }

// ValidateUpdate validates an update of a limit range.
func (Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateUpdate(obj.(*corev1.LimitRange), old.(*corev1.LimitRange))
}

// WarningsOnUpdate returns no warnings.
func (Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return true }
