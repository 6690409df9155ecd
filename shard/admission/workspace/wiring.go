package workspace

import (
	"k8s.io/apiserver/pkg/authorization/authorizer"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// NewConfig returns the plugin's configuration over a shard's wildcard
// informers of LogicalClusters and WorkspaceTypes, its path resolution and its
// authorizer. The plugin is ready once both informers have synced; it
// neither starts nor waits for them.
func NewConfig(logicalClusters informers.Informer[*corev1alpha1.LogicalCluster], types informers.Informer[*tenancyv1alpha1.WorkspaceType],
	resolvePath func(logicalcluster.Path) (logicalcluster.Name, bool), authz authorizer.Authorizer) Config {
	return Config{
		LogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			return logicalClusters.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
		},
		ResolvePath: resolvePath,
		WorkspaceType: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.WorkspaceType, error) {
			return types.Lister().Cluster(cluster).Get(name)
		},
		Authorizer: authz,
		Ready: func() bool {
			return logicalClusters.Informer().HasSynced() && types.Informer().HasSynced()
		},
	}
}
