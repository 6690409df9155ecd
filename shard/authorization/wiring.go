package authorization

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// NewForInformers builds the chain of a shard over its wildcard informers:
// the four RBAC informers (with the subject indexes added) and the
// unstructured informer of core.kcp.io/v1alpha1 logicalclusters. Call it
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
		ClusterState: ClusterStates(f.ForResource(corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters"))),
	}
	for _, o := range opts {
		o(&c)
	}
	return New(c)
}

// ClusterStates reads the state of logical clusters from a wildcard
// informer of unstructured LogicalClusters.
func ClusterStates(logicalClusters informers.Informer[*unstructured.Unstructured]) ClusterStateFunc {
	lister := logicalClusters.Lister()
	return func(cluster logicalcluster.Name) (ClusterState, bool, error) {
		lc, err := lister.Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
		switch {
		case apierrors.IsNotFound(err):
			return ClusterState{}, false, nil
		case err != nil:
			return ClusterState{}, false, err
		}
		return StateOf(lc)
	}
}

// StateOf reads the state of an unstructured LogicalCluster.
func StateOf(lc *unstructured.Unstructured) (ClusterState, bool, error) {
	phase, _, err := unstructured.NestedString(lc.Object, "status", "phase")
	if err != nil {
		return ClusterState{}, false, fmt.Errorf("reading the phase of LogicalCluster %s: %w", logicalcluster.From(lc), err)
	}
	return ClusterState{
		Phase:          corev1alpha1.LogicalClusterPhaseType(phase),
		RequiredGroups: lc.GetAnnotations()[corev1alpha1.RequiredGroupsAnnotationKey],
	}, true, nil
}
