package replicated

import (
	"context"
	"fmt"
	"regexp"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Wildcard in a scope stands for every shard or every logical cluster.
const Wildcard = "*"

// ShardAnnotationKey names the shard an object in the cache came from, as
// kcp's cache server does.
const ShardAnnotationKey = "kcp.io/shard"

// Scope is the shard and logical cluster a request addresses: a name, or
// Wildcard.
type Scope struct {
	Shard   string
	Cluster logicalcluster.Name
}

// Wildcard tells whether the scope spans more than one shard or cluster.
func (s Scope) Wildcard() bool {
	return s.Shard == Wildcard || s.Cluster == logicalcluster.Name(Wildcard)
}

func (s Scope) String() string {
	return fmt.Sprintf("shards/%s/clusters/%s", s.Shard, s.Cluster)
}

// shardRE is what kcp accepts as a shard name (pkg/cache/server), without
// the empty name: lower case alphanumerics, '-' and ':'.
var shardRE = regexp.MustCompile(`^[a-z0-9:-]{1,61}$`)

// ValidShard tells whether name can name a shard in a cache URL.
func ValidShard(name string) bool {
	return name == Wildcard || shardRE.MatchString(name)
}

// ValidCluster tells whether name can name a logical cluster in a cache
// URL.
func ValidCluster(name string) bool {
	return name == Wildcard || logicalcluster.Name(name).IsValid()
}

type scopeKey struct{}

// WithScope returns ctx with the request's scope.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the request's scope.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}
