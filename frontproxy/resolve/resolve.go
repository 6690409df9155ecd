// Package resolve maps workspace paths to the shard and logical cluster that
// serve them, hop by hop, with a bounded cache that change events keep
// fresh.
//
// root:org:team is resolved as: root is the root logical cluster on the root
// shard; org is the Workspace "org" in root, whose spec.cluster and
// core.kcp.io/shard annotation name the next logical cluster and its shard;
// team is the Workspace "team" there; and so on. Every hop is one GET on the
// shard holding the parent logical cluster, cached in an LRU bounded by size
// and TTL. One watch of Workspaces per shard, across all its logical
// clusters, evicts the hops a created, changed or deleted Workspace touches,
// so nothing is kept per workspace beyond the bounded cache and nothing is
// started per workspace.
//
// Cache audit (DESIGN 1.6): answers are read with the proxy's shard-admin
// credentials and keyed by logical cluster and workspace name; they say
// where a path is served, not who may use it, so they are shared by all
// users. Whether a user may use the workspace is decided by its shard.
package resolve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ErrNotFound means that a path names no logical cluster.
var ErrNotFound = errors.New("no logical cluster at this path")

// UnavailableError means that a shard needed to resolve or serve a path
// cannot be reached.
type UnavailableError struct {
	Shard string
	Err   error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("shard %q is unavailable: %v", e.Shard, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Target is where a path is served.
type Target struct {
	// Shard is the name of the shard.
	Shard string
	// URL is the shard's base URL (Shard spec.baseURL).
	URL string
	// Cluster is the logical cluster name.
	Cluster logicalcluster.Name
}

// Config configures a Resolver.
type Config struct {
	// Root is an admin config of the root shard: Shard objects are read in
	// its root logical cluster.
	Root *rest.Config
	// Shards holds the credentials used against every shard (its host is
	// replaced by each shard's base URL); Root's when nil.
	Shards *rest.Config
	// CacheSize bounds the cached hops and logical cluster locations.
	CacheSize int
	// TTL bounds how long a cached entry is used.
	TTL time.Duration
	// RequestTimeout bounds each resolution read.
	RequestTimeout time.Duration
}

// touchedTTL is how long an invalidation is remembered by key: longer
// than any read of a shard takes (Config.Timeout).
const touchedTTL = time.Minute

// DefaultCacheSize and DefaultTTL are the defaults of the flags.
const (
	DefaultCacheSize      = 10000
	DefaultTTL            = 5 * time.Minute
	defaultRequestTimeout = 10 * time.Second
)

// hopKey caches Workspace name in the logical cluster parent.
type hopKey struct {
	parent logicalcluster.Name
	name   string
}

// locationKey caches the shard of a logical cluster looked up by name.
type locationKey struct {
	cluster logicalcluster.Name
}

// entry is a cached answer; found is false for a cached "does not exist".
type entry struct {
	found   bool
	cluster logicalcluster.Name
	shard   string
	// source is the shard the answer was read from (for hops: the shard of
	// the parent), so that its entries are dropped when its watch restarts.
	source string
}

// Resolver resolves workspace paths.
type Resolver struct {
	root    *rest.Config
	shards  *rest.Config
	ttl     time.Duration
	timeout time.Duration
	cache   *cache.LRUExpireCache
	// seq counts invalidations, and epoch the times a shard's answers
	// were all dropped. An answer is not cached when its key was
	// invalidated (touched records when, by key) or an epoch passed while
	// it was read, as it may predate the change; changes of other keys do
	// not matter, so a busy installation still caches.
	seq     atomic.Uint64
	epoch   atomic.Uint64
	touched *cache.LRUExpireCache

	mu sync.RWMutex
	// ctx is Run's context, which the shards' watches run under.
	ctx context.Context
	// backends are the known shards by name.
	backends  map[string]*backend
	rootShard string
	rootURL   string
	synced    bool
	// refreshing limits re-reads of the Shard objects on a miss.
	lastRefresh time.Time
}

// backend is one shard.
type backend struct {
	name    string
	baseURL string
	config  *rest.Config
	client  *http.Client
	cancel  context.CancelFunc
	// watching is true while the watch of the shard's Workspaces runs:
	// only then are answers read from the shard cached, so that a shard
	// whose watch cannot run is asked every time rather than answered
	// from a cache nothing invalidates.
	watching atomic.Bool
	// wake ends the backoff of the watch when the shard answered a read.
	wake chan struct{}
}

// answered tells the watch of a shard that is not running that the shard
// answers again.
func (b *backend) answered() {
	if b.watching.Load() || b.wake == nil {
		return
	}
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// New returns a Resolver; Run starts it.
func New(c Config) (*Resolver, error) {
	if c.Root == nil {
		return nil, errors.New("the root shard's config is required")
	}
	shards := c.Shards
	if shards == nil {
		shards = c.Root
	}
	if c.CacheSize <= 0 {
		c.CacheSize = DefaultCacheSize
	}
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = defaultRequestTimeout
	}
	root := rest.CopyConfig(c.Root)
	root.Host = clusters.ShardHost(root.Host)
	return &Resolver{
		root:     root,
		shards:   rest.CopyConfig(shards),
		ttl:      c.TTL,
		timeout:  c.RequestTimeout,
		cache:    cache.NewLRUExpireCache(c.CacheSize),
		touched:  cache.NewLRUExpireCache(max(c.CacheSize, 10000)),
		backends: map[string]*backend{},
		rootURL:  root.Host,
	}, nil
}

// Synced tells whether the shards have been read once.
func (r *Resolver) Synced() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.synced
}

// RootURL returns the base URL of the root shard.
func (r *Resolver) RootURL() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if b := r.backends[r.rootShard]; b != nil {
		return b.baseURL
	}
	return r.rootURL
}

// RootShard returns the name of the root shard.
func (r *Resolver) RootShard() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.rootShard
}

// Resolve returns where the workspace path p is served.
func (r *Resolver) Resolve(ctx context.Context, p logicalcluster.Path) (Target, error) {
	segments := strings.Split(p.String(), logicalcluster.Separator)
	if p.Empty() || segments[0] == "" {
		return Target{}, ErrNotFound
	}
	var cluster logicalcluster.Name
	var shard string
	if segments[0] == string(logicalcluster.Root) {
		cluster, shard = logicalcluster.Root, r.RootShard()
		if shard == "" {
			return Target{}, &UnavailableError{Shard: "root", Err: errors.New("the root shard has not been reached yet")}
		}
	} else {
		e, err := r.locate(ctx, logicalcluster.Name(segments[0]))
		if err != nil {
			return Target{}, err
		}
		cluster, shard = e.cluster, e.shard
	}
	for _, name := range segments[1:] {
		e, err := r.hop(ctx, cluster, shard, name)
		if err != nil {
			return Target{}, err
		}
		cluster, shard = e.cluster, e.shard
	}
	b, err := r.backend(ctx, shard)
	if err != nil {
		return Target{}, err
	}
	return Target{Shard: shard, URL: b.baseURL, Cluster: cluster}, nil
}

// hop resolves the Workspace name in the logical cluster parent on shard.
func (r *Resolver) hop(ctx context.Context, parent logicalcluster.Name, shard, name string) (entry, error) {
	key := hopKey{parent: parent, name: name}
	if v, ok := r.cache.Get(key); ok {
		return found(v.(entry))
	}
	b, err := r.backend(ctx, shard)
	if err != nil {
		return entry{}, err
	}
	seq, epoch := r.seq.Load(), r.epoch.Load()
	e := entry{source: shard}
	ws, err := b.workspace(ctx, r.timeout, parent, name)
	if err == nil || apierrors.IsNotFound(err) {
		b.answered()
	}
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return entry{}, &UnavailableError{Shard: shard, Err: err}
	case ws.Spec.Cluster != "" && ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey] != "":
		// A Workspace not scheduled yet has no logical cluster to go to.
		e.found = true
		e.cluster = logicalcluster.Name(ws.Spec.Cluster)
		e.shard = ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey]
	}
	if r.stable(key, e, seq, epoch) && b.watching.Load() {
		r.cache.Add(key, e, r.ttl)
	}
	return found(e)
}

// stable tells whether an answer e for key read since seq and epoch may
// be cached: no shard was forgotten since, and no change of key since
// routes elsewhere.
func (r *Resolver) stable(key any, e entry, seq, epoch uint64) bool {
	if r.epoch.Load() != epoch {
		return false
	}
	if v, ok := r.touched.Get(key); ok {
		if t := v.(touch); t.seq > seq && !sameRoute(e, t.route) {
			return false
		}
	}
	return true
}

// locate finds the shard of the logical cluster name by asking every shard.
func (r *Resolver) locate(ctx context.Context, name logicalcluster.Name) (entry, error) {
	if !name.IsValid() || name.IsSystem() {
		return entry{}, ErrNotFound
	}
	key := locationKey{cluster: name}
	if v, ok := r.cache.Get(key); ok {
		return found(v.(entry))
	}
	seq, epoch := r.seq.Load(), r.epoch.Load()
	r.mu.RLock()
	backends := make([]*backend, 0, len(r.backends))
	for _, b := range r.backends {
		backends = append(backends, b)
	}
	r.mu.RUnlock()

	type answer struct {
		shard string
		ok    bool
		err   error
	}
	answers := make(chan answer, len(backends))
	for _, b := range backends {
		go func() {
			ok, err := b.hasCluster(ctx, r.timeout, name)
			answers <- answer{shard: b.name, ok: ok, err: err}
		}()
	}
	e := entry{cluster: name}
	watching := true
	for _, b := range backends {
		watching = watching && b.watching.Load()
	}
	var unavailable error
	for range backends {
		a := <-answers
		switch {
		case a.err != nil:
			unavailable = &UnavailableError{Shard: a.shard, Err: a.err}
		case a.ok:
			e.found, e.shard, e.source = true, a.shard, a.shard
		}
	}
	if !e.found && unavailable != nil {
		// The logical cluster may be on the shard that did not answer.
		return entry{}, unavailable
	}
	if r.stable(key, e, seq, epoch) && watching {
		r.cache.Add(key, e, r.ttl)
	}
	return found(e)
}

func found(e entry) (entry, error) {
	if !e.found {
		return entry{}, ErrNotFound
	}
	return e, nil
}

// backend returns the shard name; a name not known yet makes the Shard
// objects be read again (at most once a second).
func (r *Resolver) backend(ctx context.Context, name string) (*backend, error) {
	r.mu.RLock()
	b := r.backends[name]
	r.mu.RUnlock()
	if b != nil {
		return b, nil
	}
	r.mu.Lock()
	recent := time.Since(r.lastRefresh) < time.Second
	r.mu.Unlock()
	if !recent {
		if err := r.syncShards(ctx); err != nil {
			klog.FromContext(ctx).V(2).Info("Reading shards failed", "err", err)
		}
		r.mu.RLock()
		b = r.backends[name]
		r.mu.RUnlock()
		if b != nil {
			return b, nil
		}
	}
	return nil, &UnavailableError{Shard: name, Err: errors.New("no Shard object with this name")}
}

// touch records a change of a key: when, and where it now routes.
type touch struct {
	seq   uint64
	route entry
}

// invalidate drops what a change of ws (deleted: gone or going) may have
// made wrong. A change that leaves the route as it was (a status update,
// a label) drops nothing.
func (r *Resolver) invalidate(ws *tenancyv1alpha1.Workspace, deleted bool) {
	seq := r.seq.Add(1)
	route := entry{}
	shard := ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey]
	if !deleted && ws.DeletionTimestamp == nil && ws.Spec.Cluster != "" && shard != "" {
		route = entry{found: true, cluster: logicalcluster.Name(ws.Spec.Cluster), shard: shard}
	}
	parent := logicalcluster.Name(ws.Annotations[logicalcluster.AnnotationKey])
	r.retouch(hopKey{parent: parent, name: ws.Name}, seq, route)
	if ws.Spec.Cluster != "" {
		r.retouch(locationKey{cluster: logicalcluster.Name(ws.Spec.Cluster)}, seq, route)
	}
}

// retouch records that key now routes to route and drops its cached
// answer unless that is route.
func (r *Resolver) retouch(key any, seq uint64, route entry) {
	r.touched.Add(key, touch{seq: seq, route: route}, touchedTTL)
	if v, ok := r.cache.Get(key); ok && sameRoute(v.(entry), route) {
		return
	}
	r.cache.Remove(key)
}

// sameRoute tells whether a cached answer routes where a change says.
func sameRoute(e, route entry) bool {
	return e.found && route.found && e.cluster == route.cluster && e.shard == route.shard
}

// forgetShard drops every answer read from shard, whose changes may have
// been missed while its watch was not running.
func (r *Resolver) forgetShard(shard string) {
	r.epoch.Add(1)
	for _, key := range r.cache.Keys() {
		switch key.(type) {
		case locationKey:
			r.cache.Remove(key)
		case hopKey:
			if v, ok := r.cache.Get(key); ok && v.(entry).source == shard {
				r.cache.Remove(key)
			}
		}
	}
}

// workspace reads the Workspace name in the logical cluster parent.
func (b *backend) workspace(ctx context.Context, timeout time.Duration, parent logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
	c, err := b.clientFor(parent)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.Workspaces().Get(ctx, name, metav1.GetOptions{})
}

// hasCluster tells whether the logical cluster name is on the shard.
func (b *backend) hasCluster(ctx context.Context, timeout time.Duration, name logicalcluster.Name) (bool, error) {
	c, err := b.clientFor(name)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = c.LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		return false, nil
	}
	return false, err
}

// clientFor returns a client of the logical cluster name on the shard; it
// shares the shard's connections and is not kept.
func (b *backend) clientFor(name logicalcluster.Name) (*kcpclient.Clientset, error) {
	cfg, err := clusters.ConfigFor(b.config, name)
	if err != nil {
		return nil, err
	}
	return kcpclient.NewForConfigAndClient(cfg, b.client)
}
