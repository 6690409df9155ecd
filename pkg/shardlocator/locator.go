// Package shardlocator finds the shard of an installation that holds a
// logical cluster: it asks the other shards (root's Shard objects, with
// the installation's admin client certificate) for the cluster's
// LogicalCluster, all at once, and keeps the answer for a while in one
// bounded cache for all clusters. Shards, the syncer virtual workspace and
// tessera-virtual-workspaces use it where a request names a logical
// cluster of another shard and no replica says where it is (a
// SyncTarget's workspace, a service account token's).
//
// Nothing is started per logical cluster: a lookup is a few requests in
// the caller's goroutine and short-lived ones, and the HTTP clients are
// per shard.
//
// Lookups that ask the other shards are rate-limited, for the whole
// locator: a request can name any cluster (a service account token's
// unverified claims do), and each distinct unknown name would otherwise
// cost one request per other shard. Beyond the limit a cluster is not
// found (and that is not kept), so a flood of made-up names costs at most
// LookupsPerSecond × (shards − 1) requests per second, while the clusters
// already found keep being answered from the cache.
package shardlocator

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/labels"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Shard is a shard of the installation.
type Shard struct {
	Name    string
	BaseURL string
}

// Config configures a Locator.
type Config struct {
	// Shards returns the other shards of the installation.
	Shards func() []Shard
	// Admin is the client configuration of a shard admin (client
	// certificate and CA); its Host is replaced by a shard's base URL.
	Admin *rest.Config
	// FoundTTL and MissingTTL keep answers; defaults 1 min and 2 s.
	FoundTTL, MissingTTL time.Duration
	// CacheSize bounds the clusters kept; default 4096.
	CacheSize int
	// LookupsPerSecond and LookupBurst limit the lookups that ask the
	// other shards; defaults 50 and 100.
	LookupsPerSecond float64
	LookupBurst      int
}

// Locator finds shards of logical clusters.
type Locator struct {
	cfg     Config
	found   *utilcache.LRUExpireCache
	clients sync.Map // name|baseURL → *client
	lookups *rate.Limiter
}

// client reaches one shard.
type client struct {
	shard  Shard
	config *rest.Config
	http   *http.Client
}

// New returns a Locator.
func New(cfg Config) *Locator {
	if cfg.FoundTTL <= 0 {
		cfg.FoundTTL = time.Minute
	}
	if cfg.MissingTTL <= 0 {
		cfg.MissingTTL = 2 * time.Second
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = 4096
	}
	if cfg.LookupsPerSecond <= 0 {
		cfg.LookupsPerSecond = 50
	}
	if cfg.LookupBurst <= 0 {
		cfg.LookupBurst = 100
	}
	return &Locator{cfg: cfg, found: utilcache.NewLRUExpireCache(cfg.CacheSize), lookups: rate.NewLimiter(rate.Limit(cfg.LookupsPerSecond), cfg.LookupBurst)}
}

// lookupTimeout bounds the questions of one lookup.
const lookupTimeout = 5 * time.Second

// Find returns the client configuration (a shard admin's, at the shard's
// base URL) and the name of the other shard that holds cluster, or false
// when none of the other shards does (or answers).
func (l *Locator) Find(ctx context.Context, cluster logicalcluster.Name) (*rest.Config, string, bool) {
	if v, ok := l.found.Get(cluster); ok {
		c, _ := v.(*client)
		if c == nil {
			return nil, "", false
		}
		return rest.CopyConfig(c.config), c.shard.Name, true
	}
	if !l.lookups.Allow() {
		klog.FromContext(ctx).V(2).Info("Too many lookups of logical clusters of other shards; not looking", "cluster", cluster)
		return nil, "", false
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	shards := l.cfg.Shards()
	answers := make(chan *client, len(shards))
	for _, sh := range shards {
		c, err := l.client(sh)
		if err != nil {
			answers <- nil
			continue
		}
		go func() {
			if c.holds(ctx, cluster) {
				answers <- c
				return
			}
			answers <- nil
		}()
	}
	for range shards {
		if c := <-answers; c != nil {
			l.found.Add(cluster, c, l.cfg.FoundTTL)
			return rest.CopyConfig(c.config), c.shard.Name, true
		}
	}
	l.found.Add(cluster, (*client)(nil), l.cfg.MissingTTL)
	return nil, "", false
}

// Forget drops what is known of cluster's shard (it moved, or its shard
// no longer answers for it).
func (l *Locator) Forget(cluster logicalcluster.Name) { l.found.Remove(cluster) }

func (l *Locator) client(sh Shard) (*client, error) {
	key := sh.Name + "|" + sh.BaseURL
	if c, ok := l.clients.Load(key); ok {
		return c.(*client), nil
	}
	cfg := rest.CopyConfig(l.cfg.Admin)
	cfg.Host = sh.BaseURL
	cfg.APIPath = ""
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	c, _ := l.clients.LoadOrStore(key, &client{shard: sh, config: cfg, http: httpClient})
	return c.(*client), nil
}

// holds tells whether the shard serves cluster's LogicalCluster.
func (c *client) holds(ctx context.Context, cluster logicalcluster.Name) bool {
	u := c.shard.BaseURL + "/clusters/" + url.PathEscape(cluster.String()) + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// OtherShards returns Config.Shards over root's Shard objects of an
// informer: those with a base URL, but own.
func OtherShards(shards informers.Informer[*corev1alpha1.Shard], own string) func() []Shard {
	return func() []Shard {
		list, err := shards.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
		if err != nil {
			return nil
		}
		out := make([]Shard, 0, len(list))
		for _, sh := range list {
			if sh.Name != own && sh.Spec.BaseURL != "" {
				out = append(out, Shard{Name: sh.Name, BaseURL: sh.Spec.BaseURL})
			}
		}
		return out
	}
}
