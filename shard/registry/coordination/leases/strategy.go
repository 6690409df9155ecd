package leases

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of leases.
// Leases have no status.
type Strategy struct {
	store.Strategy[*coordinationv1.Lease]
}

// NewStrategy returns the strategy of leases, typing objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.Namespaced, Validate, ValidateUpdate)}
}

// PrepareForCreate drops the fields of coordinated leader election, which
// the shard does not implement (Kubernetes drops them while the
// CoordinatedLeaderElection feature is off).
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	l := obj.(*coordinationv1.Lease)
	l.Spec.Strategy, l.Spec.PreferredHolder = nil, nil
}

// PrepareForUpdate drops the fields of coordinated leader election unless
// the stored lease has them already.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	l, oldL := obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease)
	if oldL.Spec.Strategy == nil {
		l.Spec.Strategy = nil
	}
	if oldL.Spec.PreferredHolder == nil {
		l.Spec.PreferredHolder = nil
	}
}

// AllowCreateOnUpdate is true: leader election PUTs its lease.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return true }

// AllowUnconditionalUpdate is false: a lease update must name the
// resourceVersion it read, so two candidates never both acquire it.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return false }
