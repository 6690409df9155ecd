package informers

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ClusterSeparator separates the logical cluster from the rest of a key.
const ClusterSeparator = "|"

// KeyFunc is the cache.KeyFunc of cluster-aware stores. It returns
// cluster|namespace/name for namespaced objects and cluster|name for
// cluster-scoped ones, the cluster taken from the kcp.io/cluster annotation;
// objects without the annotation get the plain namespace/name or name key.
// It passes the key of a cache.DeletedFinalStateUnknown tombstone and a
// cache.ExplicitKey through. The format is kcp's, so keys can be exchanged
// with kcp-aware tools.
func KeyFunc(obj any) (string, error) {
	switch o := obj.(type) {
	case cache.ExplicitKey:
		return string(o), nil
	case cache.DeletedFinalStateUnknown:
		return o.Key, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("object has no meta: %w", err)
	}
	return ToKey(logicalcluster.From(m), m.GetNamespace(), m.GetName()), nil
}

// ToKey returns the store key of an object: cluster|namespace/name,
// cluster|name for an empty namespace, and without "cluster|" for an empty
// cluster.
func ToKey(cluster logicalcluster.Name, namespace, name string) string {
	var b strings.Builder
	b.Grow(len(cluster) + len(namespace) + len(name) + 2)
	if cluster != "" {
		b.WriteString(string(cluster))
		b.WriteString(ClusterSeparator)
	}
	if namespace != "" {
		b.WriteString(namespace)
		b.WriteByte('/')
	}
	b.WriteString(name)
	return b.String()
}

// SplitKey splits a key made by ToKey or KeyFunc into its parts.
func SplitKey(key string) (cluster logicalcluster.Name, namespace, name string, err error) {
	rest := key
	if c, r, ok := strings.Cut(key, ClusterSeparator); ok {
		if c == "" || strings.Contains(r, ClusterSeparator) {
			return "", "", "", fmt.Errorf("unexpected key format %q", key)
		}
		cluster, rest = logicalcluster.Name(c), r
	}
	switch parts := strings.Split(rest, "/"); len(parts) {
	case 1:
		name = parts[0]
	case 2:
		namespace, name = parts[0], parts[1]
		if namespace == "" {
			return "", "", "", fmt.Errorf("unexpected key format %q: empty namespace", key)
		}
	default:
		return "", "", "", fmt.Errorf("unexpected key format %q", key)
	}
	if name == "" {
		return "", "", "", fmt.Errorf("unexpected key format %q: empty name", key)
	}
	return cluster, namespace, name, nil
}
