package leases

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
)

// Strategy implements the create, update and delete behaviour of leases.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of leases, typing objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator}
}

// NamespaceScoped is true: leases live in namespaces.
func (Strategy) NamespaceScoped() bool { return true }

// PrepareForCreate does nothing: leases have no status.
func (Strategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: leases have no status.
func (Strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new lease.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return Validate(obj.(*coordinationv1.Lease))
}

// WarningsOnCreate returns no warnings.
func (Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (Strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is true: leader election PUTs its lease.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return true }

// ValidateUpdate validates an update of a lease.
func (Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateUpdate(obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease))
}

// WarningsOnUpdate returns no warnings.
func (Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is false: a lease update must name the
// resourceVersion it read, so two candidates never both acquire it.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return false }
