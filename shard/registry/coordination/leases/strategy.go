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

// AllowCreateOnUpdate is true: leader election PUTs its lease.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return true }

// AllowUnconditionalUpdate is false: a lease update must name the
// resourceVersion it read, so two candidates never both acquire it.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return false }
