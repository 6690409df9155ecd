package clusters

import (
	"fmt"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// clustersSegment is the path segment that introduces a logical cluster.
const clustersSegment = "/clusters/"

// ShardHost returns host without a trailing /clusters/<name> suffix, so that
// a kubeconfig pointing at one logical cluster (as kcp's admin kubeconfig
// does, https://host/clusters/root) can be used as the base of a shard.
// Other path prefixes (for example of a reverse proxy) are kept.
func ShardHost(host string) string {
	host = strings.TrimRight(host, "/")
	i := strings.LastIndex(host, clustersSegment)
	if i < 0 || strings.Contains(host[i+len(clustersSegment):], "/") {
		return host
	}
	return host[:i]
}

// HostFor returns the host URL of the logical cluster with the given name or
// path on the shard at host: <host>/clusters/<cluster>.
func HostFor(host, cluster string) string {
	return ShardHost(host) + clustersSegment + cluster
}

// ConfigFor returns a copy of cfg that addresses the logical cluster name.
// logicalcluster.Wildcard is accepted and addresses all logical clusters of
// the shard. It fails for a name that is neither valid nor the wildcard, so
// that a malformed name can never address another path of the server (a
// name like ".." would otherwise reach the shard root).
func ConfigFor(cfg *rest.Config, name logicalcluster.Name) (*rest.Config, error) {
	if err := validateName(name); err != nil {
		return nil, err
	}
	return configFor(cfg, name.String()), nil
}

// ConfigForPath is ConfigFor for a workspace path such as root:org:team, as
// the front-proxy serves them.
func ConfigForPath(cfg *rest.Config, path logicalcluster.Path) (*rest.Config, error) {
	if !path.IsValid() {
		return nil, fmt.Errorf("invalid logical cluster path %q: %s", path, logicalcluster.ValidationMessage)
	}
	return configFor(cfg, path.String()), nil
}

// WildcardConfig returns a copy of cfg that addresses all logical clusters of
// the shard (/clusters/*). Only list and watch requests are served there.
func WildcardConfig(cfg *rest.Config) *rest.Config {
	return configFor(cfg, logicalcluster.Wildcard.String())
}

func configFor(cfg *rest.Config, cluster string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = HostFor(cfg.Host, cluster)
	return c
}

func validateName(name logicalcluster.Name) error {
	if name != logicalcluster.Wildcard && !name.IsValid() {
		return fmt.Errorf("invalid logical cluster name %q: %s", name, logicalcluster.ValidationMessage)
	}
	return nil
}
