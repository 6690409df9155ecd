package storage

import (
	"fmt"
	"strings"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// clusterKey inserts the cluster segment after the resource prefix:
// "<prefix>/<ns>/<name>" becomes "<prefix>/<cluster>/<ns>/<name>", and
// "<prefix>" becomes "<prefix>/<cluster>".
func clusterKey(prefix string, cluster logicalcluster.Name, key string) (string, error) {
	if !strings.HasPrefix(key, prefix) {
		return "", fmt.Errorf("key %q is outside of resource prefix %q", key, prefix)
	}
	rest := key[len(prefix):]
	if rest != "" && rest[0] != '/' {
		return "", fmt.Errorf("key %q is outside of resource prefix %q", key, prefix)
	}
	return prefix + "/" + string(cluster) + rest, nil
}

// clusterFromKey returns the cluster segment of a cluster-aware key.
func clusterFromKey(prefix, key string) (logicalcluster.Name, error) {
	if !strings.HasPrefix(key, prefix+"/") {
		return "", fmt.Errorf("key %q is outside of resource prefix %q", key, prefix)
	}
	rest := key[len(prefix)+1:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	if rest == "" {
		return "", fmt.Errorf("key %q has no logical cluster segment", key)
	}
	return logicalcluster.Name(rest), nil
}
