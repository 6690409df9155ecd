package authorization

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// NewForInformers builds the chain of a shard over its wildcard informers:
// the four RBAC informers (with the subject indexes added) and the
// informer of core.kcp.io/v1alpha1 logicalclusters. Call it
// before f is started, or start f again after it. opts may set the
// optional hooks of Config (ContentAdmin, MaximalPermissionPolicy); Store
// and ClusterState are filled in.
func NewForInformers(f *informers.SharedInformerFactory, opts ...func(*Config)) (*Authorizer, error) {
	store, err := rbac.NewInformerStore(f)
	if err != nil {
		return nil, err
	}
	c := Config{
		Store:        store,
		ClusterState: ClusterStates(f.LogicalClusters()),
	}
	for _, o := range opts {
		o(&c)
	}
	return New(c)
}

// ClusterStates reads the state of logical clusters from a wildcard
// informer of LogicalClusters.
func ClusterStates(logicalClusters informers.Informer[*corev1alpha1.LogicalCluster]) ClusterStateFunc {
	lister := logicalClusters.Lister()
	return func(cluster logicalcluster.Name) (ClusterState, bool, error) {
		lc, err := lister.Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
		switch {
		case apierrors.IsNotFound(err):
			return ClusterState{}, false, nil
		case err != nil:
			return ClusterState{}, false, err
		}
		return ClusterState{
			Phase:          lc.Status.Phase,
			RequiredGroups: lc.Annotations[corev1alpha1.RequiredGroupsAnnotationKey],
		}, true, nil
	}
}
