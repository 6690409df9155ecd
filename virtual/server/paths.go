package server

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// byPath indexes LogicalClusters by their canonical path (kcp.io/path).
// Cache audit (issue 9): not cluster-dependent: it maps paths to clusters
// and is read before a request has one.
const byPath = "kcp.io/path"

// pathIndex is the index function of byPath; a deleting logical cluster
// gives its path up (a new workspace of the same name may already use
// it).
func pathIndex(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	if p := u.GetAnnotations()[logicalcluster.PathAnnotationKey]; p != "" {
		return []string{p}, nil
	}
	return nil, nil
}

// paths resolves workspace paths on one shard as the shard does: by the
// canonical path of a LogicalCluster, else hop by hop from the longest
// prefix that is a canonical path (or a logical cluster name), following
// Workspaces' spec.cluster. A path that leaves the shard on the way is not
// resolved.
type paths struct {
	// byCanonicalPath returns the logical clusters whose kcp.io/path is
	// path.
	byCanonicalPath func(path string) ([]any, error)
	// workspace returns a Workspace of a logical cluster.
	workspace func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error)
}

// resolve maps a workspace path or logical cluster name to its logical
// cluster.
func (p paths) resolve(path logicalcluster.Path) (logicalcluster.Name, bool) {
	if name, ok := p.canonical(path.String()); ok {
		return name, true
	}
	var rest []string
	for cur := path; ; {
		parent, ok := cur.Parent()
		if !ok {
			// cur is one segment: a logical cluster name.
			return p.walk(logicalcluster.Name(cur.String()), rest)
		}
		rest = append([]string{cur.Base()}, rest...)
		cur = parent
		if name, ok := p.canonical(cur.String()); ok {
			return p.walk(name, rest)
		}
	}
}

func (p paths) canonical(path string) (logicalcluster.Name, bool) {
	objs, err := p.byCanonicalPath(path)
	if err != nil || len(objs) == 0 {
		return "", false
	}
	u, ok := objs[0].(*unstructured.Unstructured)
	if !ok {
		return "", false
	}
	return logicalcluster.From(u), true
}

// walk follows the Workspaces named by segments, starting in cluster.
func (p paths) walk(cluster logicalcluster.Name, segments []string) (logicalcluster.Name, bool) {
	for _, seg := range segments {
		ws, err := p.workspace(cluster, seg)
		if err != nil || ws.Spec.Cluster == "" {
			return "", false
		}
		cluster = logicalcluster.Name(ws.Spec.Cluster)
	}
	return cluster, true
}
