package clusters

import (
	"fmt"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// DefaultCacheSize is the number of per-cluster clients a Cache keeps when
// no size is given. Building a client opens no connection and starts no
// goroutine, so the bound only caps memory: a kubernetes clientset holds about
// 30 KB (one REST client per API group), a dynamic client far less. Evicted
// clients are rebuilt on demand, which costs about as much as one request.
const DefaultCacheSize = 128

// NewClientFunc builds a client for one endpoint over a shared http.Client,
// for example kubernetes.NewForConfigAndClient.
type NewClientFunc[T any] func(*rest.Config, *http.Client) (T, error)

// Cache hands out clients of type T for logical clusters of one shard. All of
// them share one http.Client and one client-side rate limiter; clients are
// built on first use and kept in a bounded LRU cache. A Cache is safe for
// concurrent use.
type Cache[T any] struct {
	base       *rest.Config
	httpClient *http.Client
	newClient  NewClientFunc[T]
	wildcard   T

	// mu serialises misses so a client is built once per cluster.
	// Cache audit (issue 9): cluster-keyed: by cluster name or path; every
	// client carries the cache's one identity, never a requester's.
	mu      sync.Mutex
	clients *lru.Cache
}

// NewCache returns a Cache over the shard at cfg.Host (a trailing
// /clusters/<name> is ignored). httpClient is shared by every client the
// cache builds; it usually comes from rest.HTTPClientFor(cfg). size bounds the
// number of cached per-cluster clients; zero or less means DefaultCacheSize.
//
// Unless cfg already carries a RateLimiter, one token bucket is created from
// cfg.QPS and cfg.Burst (with the rest package defaults for zero values) and
// shared by all clusters: a controller talks to one shard, however many
// logical clusters it serves.
func NewCache[T any](cfg *rest.Config, httpClient *http.Client, newClient NewClientFunc[T], size int) (*Cache[T], error) {
	if httpClient == nil {
		return nil, fmt.Errorf("building cluster client cache for %s: http client is nil", cfg.Host)
	}
	if size <= 0 {
		size = DefaultCacheSize
	}
	base := rest.CopyConfig(cfg)
	base.Host = ShardHost(cfg.Host)
	if base.RateLimiter == nil {
		base.RateLimiter = sharedRateLimiter(base.QPS, base.Burst)
	}
	c := &Cache[T]{
		base:       base,
		httpClient: httpClient,
		newClient:  newClient,
		clients:    lru.New(size),
	}
	// Building the wildcard client up front validates the configuration, so
	// that later per-cluster constructions cannot fail for it.
	wildcard, err := newClient(WildcardConfig(base), httpClient)
	if err != nil {
		return nil, fmt.Errorf("building wildcard client for %s: %w", base.Host, err)
	}
	c.wildcard = wildcard
	return c, nil
}

// sharedRateLimiter mirrors what rest.RESTClientFor does per REST client,
// once for all of them. A negative qps disables rate limiting.
func sharedRateLimiter(qps float32, burst int) flowcontrol.RateLimiter {
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps < 0 {
		return nil
	}
	return flowcontrol.NewTokenBucketRateLimiter(qps, burst)
}

// For returns the client for the logical cluster name;
// logicalcluster.Wildcard gives the wildcard client. It fails for an invalid
// name.
func (c *Cache[T]) For(name logicalcluster.Name) (T, error) {
	if name == logicalcluster.Wildcard {
		return c.wildcard, nil
	}
	if err := validateName(name); err != nil {
		var zero T
		return zero, err
	}
	return c.get(name.String())
}

// ForPath returns the client for a workspace path such as root:org:team, for
// use against a front-proxy.
func (c *Cache[T]) ForPath(path logicalcluster.Path) (T, error) {
	if !path.IsValid() {
		var zero T
		return zero, fmt.Errorf("invalid logical cluster path %q: %s", path, logicalcluster.ValidationMessage)
	}
	return c.get(path.String())
}

// Cluster returns the client for the logical cluster name, or the wildcard
// client for logicalcluster.Wildcard. It panics if name is invalid, which is
// a programming error for names taken from keys or the kcp.io/cluster
// annotation; use For for names from user input.
func (c *Cache[T]) Cluster(name logicalcluster.Name) T {
	client, err := c.For(name)
	if err != nil {
		panic(err)
	}
	return client
}

// Wildcard returns the client for /clusters/*, which serves list and watch
// across all logical clusters of the shard.
func (c *Cache[T]) Wildcard() T {
	return c.wildcard
}

// HTTPClient returns the http.Client shared by all clients of the cache.
func (c *Cache[T]) HTTPClient() *http.Client {
	return c.httpClient
}

func (c *Cache[T]) get(cluster string) (T, error) {
	if client, ok := c.clients.Get(cluster); ok {
		return client.(T), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.clients.Get(cluster); ok {
		return client.(T), nil
	}
	client, err := c.newClient(configFor(c.base, cluster), c.httpClient)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("building client for logical cluster %q: %w", cluster, err)
	}
	c.clients.Add(cluster, client)
	return client, nil
}
