package limitranges

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of limit
// ranges. Limit ranges have no status.
type Strategy struct {
	store.Strategy[*corev1.LimitRange]
}

// NewStrategy returns the strategy of limit ranges, typing objects with
// typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.Namespaced, Validate, ValidateUpdate)}
}

// PrepareForCreate names a limit range without a name, as Kubernetes does,
// with a random UUID.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if lr := obj.(*corev1.LimitRange); lr.Name == "" {
		lr.Name = string(uuid.NewUUID())
	}
}

// AllowCreateOnUpdate is true: PUT creates a missing limit range.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return true }
