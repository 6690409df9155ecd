package configmaps

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of
// configmaps. Configmaps have no status.
type Strategy struct {
	store.Strategy[*corev1.ConfigMap]
}

// NewStrategy returns the strategy of configmaps, typing objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.Namespaced, Validate, ValidateUpdate)}
}
