// Package defaultnamespace gives every Ready logical cluster of the shard a
// namespace named "default", and recreates it when it is deleted, as
// Kubernetes does for its default namespace.
package defaultnamespace

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// Name is the namespace every logical cluster gets.
const Name = "default"

// state is what reconcile needs to know of a cluster.
type state struct {
	// ready: the cluster's LogicalCluster exists, is Ready and not deleting.
	ready bool
	// exists: the namespace is in the cache.
	exists bool
}

// reconcile creates the default namespace of a ready cluster that lacks it.
func reconcile(ctx context.Context, cluster logicalcluster.Name, get func(logicalcluster.Name) (state, error),
	create func(ctx context.Context, cluster logicalcluster.Name) error) (reconciler.Result, error) {
	st, err := get(cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	if !st.ready || st.exists {
		return reconciler.Result{}, nil
	}
	if err := create(ctx, cluster); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconciler.Result{}, err
	}
	return reconciler.Result{}, nil
}
