// Package paths resolves workspace paths to logical clusters from
// informers, as a shard and its virtual workspaces do: by the canonical
// path of a LogicalCluster (its kcp.io/path annotation), else hop by hop
// from the longest prefix that is a canonical path (or a logical cluster
// name), following Workspaces' spec.cluster, and finally, where replicas
// of other shards are known, by the kcp.io/path their objects carry.
//
// Cache audit (issue 9): the indexes are not cluster-dependent: they map
// paths to clusters and are read before a request has one.
package paths

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ByPath is the name of the index of objects by their kcp.io/path.
const ByPath = "kcp.io/path"

// LogicalClusterIndex indexes LogicalClusters by their canonical path. A
// deleting logical cluster gives its path up: a new workspace of the same
// name may already use it.
func LogicalClusterIndex(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok || m.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	return ReplicaIndex(obj)
}

// ReplicaIndex indexes any object by its kcp.io/path annotation, such as
// the cache's replicas of other shards' exports and types.
func ReplicaIndex(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if p := m.GetAnnotations()[logicalcluster.PathAnnotationKey]; p != "" {
		return []string{p}, nil
	}
	return nil, nil
}

// Resolver maps workspace paths to logical clusters.
type Resolver struct {
	// ByCanonicalPath returns the LogicalClusters whose kcp.io/path is
	// path (an index lookup with LogicalClusterIndex).
	ByCanonicalPath func(path string) ([]any, error)
	// Workspace returns a Workspace of a logical cluster.
	Workspace func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error)
	// Elsewhere, if set, resolves what the informers above cannot, e.g.
	// from replicas of other shards' objects.
	Elsewhere func(path string) (logicalcluster.Name, bool)
}

// Resolve maps a workspace path or logical cluster name to its logical
// cluster.
func (r Resolver) Resolve(path logicalcluster.Path) (logicalcluster.Name, bool) {
	if name, ok := r.local(path); ok {
		return name, true
	}
	if r.Elsewhere != nil {
		return r.Elsewhere(path.String())
	}
	return "", false
}

func (r Resolver) local(path logicalcluster.Path) (logicalcluster.Name, bool) {
	if name, ok := r.canonical(path.String()); ok {
		return name, true
	}
	var rest []string
	for cur := path; ; {
		parent, ok := cur.Parent()
		if !ok {
			// cur is one segment: a logical cluster name.
			return r.walk(logicalcluster.Name(cur.String()), rest)
		}
		rest = append([]string{cur.Base()}, rest...)
		cur = parent
		if name, ok := r.canonical(cur.String()); ok {
			return r.walk(name, rest)
		}
	}
}

func (r Resolver) canonical(path string) (logicalcluster.Name, bool) {
	objs, err := r.ByCanonicalPath(path)
	if err != nil || len(objs) == 0 {
		return "", false
	}
	m, ok := objs[0].(metav1.Object)
	if !ok {
		return "", false
	}
	return logicalcluster.From(m), true
}

// walk follows the Workspaces named by segments, starting in cluster.
func (r Resolver) walk(cluster logicalcluster.Name, segments []string) (logicalcluster.Name, bool) {
	for _, seg := range segments {
		ws, err := r.Workspace(cluster, seg)
		if err != nil || ws.Spec.Cluster == "" {
			return "", false
		}
		cluster = logicalcluster.Name(ws.Spec.Cluster)
	}
	return cluster, true
}
