package server

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// byPath indexes LogicalClusters by their canonical path (kcp.io/path).
// Cache audit (issue 9): not cluster-dependent: it maps paths to clusters
// and is read before a request has one.
const byPath = "kcp.io/path"

func pathIndex(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetDeletionTimestamp() != nil {
		// A deleting logical cluster gives its path up: a new workspace of
		// the same name may already use it.
		return nil, nil
	}
	if p := u.GetAnnotations()[logicalcluster.PathAnnotationKey]; p != "" {
		return []string{p}, nil
	}
	return nil, nil
}

// resolvePath maps a workspace path to the logical cluster it addresses on
// this shard: by the canonical path of a local LogicalCluster, else hop by
// hop from the longest prefix that is a local canonical path (or a logical
// cluster name), following Workspaces' spec.cluster; else by the path
// the cache's replicas of other shards' exports and types carry (a path
// that leaves this shard and names no replica is resolved by the
// front-proxy only).
func (s *Server) resolvePath(path logicalcluster.Path) (logicalcluster.Name, bool) {
	if name, ok := s.resolveLocalPath(path); ok {
		return name, true
	}
	return s.clusterByReplicaPath(path.String())
}

// replicaPathIndex indexes replicas by their kcp.io/path annotation.
func replicaPathIndex(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if p := m.GetAnnotations()[logicalcluster.PathAnnotationKey]; p != "" {
		return []string{p}, nil
	}
	return nil, nil
}

// clusterByReplicaPath finds the logical cluster of a path among the
// replicas of other shards' exports and types.
func (s *Server) clusterByReplicaPath(path string) (logicalcluster.Name, bool) {
	for _, informer := range []cache.SharedIndexInformer{s.global.APIExports().Informer(), s.global.WorkspaceTypes().Informer()} {
		objs, err := informer.GetIndexer().ByIndex(byPath, path)
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

func (s *Server) resolveLocalPath(path logicalcluster.Path) (logicalcluster.Name, bool) {
	if name, ok := s.clusterByCanonicalPath(path.String()); ok {
		return name, true
	}
	var rest []string
	for p := path; ; {
		parent, ok := p.Parent()
		if !ok {
			// p is one segment: a logical cluster name.
			return s.walkWorkspaces(logicalcluster.Name(p.String()), rest)
		}
		rest = append([]string{p.Base()}, rest...)
		p = parent
		if name, ok := s.clusterByCanonicalPath(p.String()); ok {
			return s.walkWorkspaces(name, rest)
		}
	}
}

func (s *Server) clusterByCanonicalPath(path string) (logicalcluster.Name, bool) {
	objs, err := s.logicalClusters.Informer().GetIndexer().ByIndex(byPath, path)
	if err != nil || len(objs) == 0 {
		return "", false
	}
	u, ok := objs[0].(*unstructured.Unstructured)
	if !ok {
		return "", false
	}
	return logicalcluster.From(u), true
}

// walkWorkspaces follows the Workspaces named by segments, starting in
// cluster.
func (s *Server) walkWorkspaces(cluster logicalcluster.Name, segments []string) (logicalcluster.Name, bool) {
	for _, seg := range segments {
		ws, err := s.Informers.Workspaces().Lister().Cluster(cluster).Get(seg)
		if err != nil || ws.Spec.Cluster == "" {
			return "", false
		}
		cluster = logicalcluster.Name(ws.Spec.Cluster)
	}
	return cluster, true
}

var _ cache.IndexFunc = pathIndex
