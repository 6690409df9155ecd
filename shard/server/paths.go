package server

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/logicalcluster/paths"
)

// resolvePath maps a workspace path to the logical cluster it addresses
// (package paths): by the shard's LogicalClusters and Workspaces, else by
// the path the cache's replicas of other shards' exports and types carry
// (a path that leaves this shard and names no replica is resolved by the
// front-proxy only).
func (s *Server) resolvePath(path logicalcluster.Path) (logicalcluster.Name, bool) {
	return s.paths.Resolve(path)
}

// newPathResolver builds the resolver once the informers exist.
func (s *Server) newPathResolver() paths.Resolver {
	return paths.Resolver{
		ByCanonicalPath: func(path string) ([]any, error) {
			return s.logicalClusters.Informer().GetIndexer().ByIndex(paths.ByPath, path)
		},
		Workspace: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
			return s.Informers.Workspaces().Lister().Cluster(cluster).Get(name)
		},
		Elsewhere: s.clusterByReplicaPath,
	}
}

// clusterByReplicaPath finds the logical cluster of a path among the
// replicas of other shards' exports and types.
func (s *Server) clusterByReplicaPath(path string) (logicalcluster.Name, bool) {
	for _, informer := range []cache.SharedIndexInformer{s.global.APIExports().Informer(), s.global.WorkspaceTypes().Informer()} {
		objs, err := informer.GetIndexer().ByIndex(paths.ByPath, path)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if m, ok := o.(metav1.Object); ok && !s.fromOtherShards(o) {
				return logicalcluster.From(m), true
			}
		}
	}
	return "", false
}
