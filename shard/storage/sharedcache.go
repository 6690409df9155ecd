package storage

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/cacher/delegator"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// SharedCache is one upstream watch cache (k8s.io/apiserver's Cacher) for
// every store of one resource prefix, also when the stores decode objects
// differently: the custom resources of one group/resource in all logical
// clusters, each cluster with its own CRD, schema and versions. It holds the
// objects as they are stored, decoded without any schema (no conversion,
// pruning or defaulting); every store converts what it reads from the cache
// into its own form on the way out (see CachedClusterAware).
type SharedCache struct {
	cacher               *cacherstorage.Cacher
	prefix               string
	newFunc, newListFunc func() runtime.Object
	stop                 sync.Once
}

// SharedCacheConfig describes a SharedCache.
type SharedCacheConfig struct {
	// Storage reads the resource prefix as stored: an etcd3 store whose
	// codec decodes objects without a schema.
	Storage storage.Interface
	// GroupResource names the cache in logs and metrics.
	GroupResource schema.GroupResource
	// ResourcePrefix is the prefix of the objects, below the storage
	// prefix; the logical cluster is the next key segment.
	ResourcePrefix string
	// Codec is Storage's codec.
	Codec runtime.Codec
	// NewFunc and NewListFunc make the objects and lists Storage decodes.
	NewFunc, NewListFunc func() runtime.Object
	// EventsHistoryWindow is how long events are kept for watches resumed
	// from a resourceVersion.
	EventsHistoryWindow time.Duration
}

// NewSharedCache starts a watch cache: it lists the whole prefix (every
// logical cluster) once and then watches it.
func NewSharedCache(c SharedCacheConfig) (*SharedCache, error) {
	prefix := c.ResourcePrefix
	cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
		Storage:             &annotating{Interface: c.Storage, prefix: prefix},
		Versioner:           storage.APIObjectVersioner{},
		GroupResource:       c.GroupResource,
		EventsHistoryWindow: c.EventsHistoryWindow,
		ResourcePrefix:      prefix,
		KeyFunc:             func(obj runtime.Object) (string, error) { return storedKey(prefix, obj) },
		NewFunc:             c.NewFunc,
		NewListFunc:         c.NewListFunc,
		// Every object has its name and namespace (empty for
		// cluster-scoped ones) and its cluster; fields of a CRD's schema
		// (selectable fields) differ from cluster to cluster, so requests
		// selecting on them are not served from the cache.
		GetAttrsFunc: withClusterField(storage.DefaultNamespaceScopedAttr),
		IndexerFuncs: clusterTrigger,
		Codec:        c.Codec,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the watch cache for %s: %w", c.GroupResource, err)
	}
	return &SharedCache{cacher: cacher, prefix: prefix, newFunc: c.NewFunc, newListFunc: c.NewListFunc}, nil
}

// Ready tells whether the cache has done its initial list and follows
// etcd.
func (c *SharedCache) Ready() bool { return c.cacher.Ready() }

// Stop ends the cache and every watch it serves.
func (c *SharedCache) Stop() { c.stop.Do(c.cacher.Stop) }

// storedKey is the key of an object under prefix:
// <prefix>/<cluster>[/<namespace>]/<name>, from its kcp.io/cluster
// annotation, which every stored object carries.
func storedKey(prefix string, obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	cluster := logicalcluster.From(m)
	if cluster == "" {
		return "", fmt.Errorf("object %s/%s of %s has no %s annotation", m.GetNamespace(), m.GetName(), prefix, logicalcluster.AnnotationKey)
	}
	if ns := m.GetNamespace(); ns != "" {
		return prefix + "/" + string(cluster) + "/" + ns + "/" + m.GetName(), nil
	}
	return prefix + "/" + string(cluster) + "/" + m.GetName(), nil
}

// CacheSource hands a store the shared cache of its resource prefix.
type CacheSource interface {
	// Acquire returns the cache if it can serve a read now, with a release
	// function to call once the read is done (for a watch, once it has
	// ended). With start, it starts the cache if there is none, and waits
	// a little for it to be ready. Without, it returns only a cache that
	// is running and ready.
	Acquire(ctx context.Context, start bool) (cache *SharedCache, release func(), ok bool)
}

// FromStored converts an object as the shared cache holds it into the
// form a store returns. It may modify stored, which is the caller's copy.
type FromStored func(stored, into runtime.Object) error

// CachedClusterAware wraps a raw etcd3 store with the cluster-aware layers
// and serves its lists, watches and gets with a resourceVersion from the
// shared cache of caches when the cache can answer them, converting what
// the cache holds with fromStored. Lists and watches of one cluster start
// the cache; those across all clusters (the shard's controllers) use it
// when it runs, and their watches do not keep it running. Writes, gets without a resourceVersion
// and the reads the cache cannot answer (a field selector on a field of the
// schema, a cache not ready, a list the cache must delegate as upstream's
// CacheDelegator does) read etcd, as ClusterAware does.
func CachedClusterAware(raw storage.Interface, resourcePrefix string, caches CacheSource, fromStored FromStored,
	newFunc, newListFunc func() runtime.Object) storage.Interface {
	return &scoped{Interface: &cachedReads{
		Interface:   &annotating{Interface: raw, prefix: resourcePrefix},
		caches:      caches,
		fromStored:  fromStored,
		newFunc:     newFunc,
		newListFunc: newListFunc,
	}, prefix: resourcePrefix}
}

// cachedReads serves reads from a SharedCache and everything else from the
// store it wraps. Keys are cluster-aware already (scoped is above).
type cachedReads struct {
	storage.Interface
	caches               CacheSource
	fromStored           FromStored
	newFunc, newListFunc func() runtime.Object
}

// acrossClusters tells whether a request reads all logical clusters and
// does not keep the cache running (see WithCacheUser).
func acrossClusters(ctx context.Context) bool {
	c, ok := logicalcluster.ClusterFrom(ctx)
	return ok && c.Wildcard && ctx.Value(cacheUserKey{}) == nil
}

type cacheUserKey struct{}

// WithCacheUser marks a request across all logical clusters as a user of
// the shared cache like a request of one cluster: it starts the cache and
// keeps it running. The apiexport virtual workspace's requests are, for
// one export's objects: its provider is what the cache serves.
func WithCacheUser(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheUserKey{}, true)
}

// cacheable tells whether the cache can select what p selects: it knows
// the labels, name, namespace and cluster of every object, not the fields
// of a CRD's schema.
func cacheable(p storage.SelectionPredicate) bool {
	if p.Field == nil {
		return true
	}
	for _, r := range p.Field.Requirements() {
		switch r.Field {
		case "metadata.name", "metadata.namespace", ClusterField:
		default:
			return false
		}
	}
	return true
}

// convert returns the store's form of an object the cache holds, leaving
// the cached object untouched.
func (c *cachedReads) convert(cached runtime.Object) (runtime.Object, error) {
	if co, ok := cached.(runtime.CacheableObject); ok {
		cached = co.GetObject()
	}
	into := c.newFunc()
	if err := c.fromStored(cached.DeepCopyObject(), into); err != nil {
		return nil, err
	}
	return into, nil
}

func (c *cachedReads) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	if opts.ResourceVersion == "" {
		// As upstream: a get without a resourceVersion reads etcd.
		return c.Interface.Get(ctx, key, opts, objPtr)
	}
	cache, release, ok := c.caches.Acquire(ctx, false)
	if !ok {
		return c.Interface.Get(ctx, key, opts, objPtr)
	}
	defer release()
	stored := cache.newFunc()
	if err := cache.cacher.Get(ctx, key, opts, stored); err != nil {
		return err
	}
	v, err := meta.Accessor(stored)
	if err != nil {
		return err
	}
	if v.GetName() == "" {
		// Not found, and opts.IgnoreNotFound: the zero object.
		out := reflect.ValueOf(objPtr).Elem()
		out.Set(reflect.Zero(out.Type()))
		return nil
	}
	converted, err := c.convert(stored)
	if err != nil {
		return err
	}
	reflect.ValueOf(objPtr).Elem().Set(reflect.ValueOf(converted).Elem())
	return nil
}

func (c *cachedReads) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if !cacheable(opts.Predicate) {
		return c.Interface.GetList(ctx, key, opts, listObj)
	}
	cache, release, ok := c.caches.Acquire(ctx, !acrossClusters(ctx))
	if !ok {
		return c.Interface.GetList(ctx, key, opts, listObj)
	}
	defer release()
	// As upstream's CacheDelegator decides.
	if _, _, err := storage.ValidateListOptions(cache.prefix, storage.APIObjectVersioner{}, opts); err != nil {
		return err
	}
	result, err := delegator.ShouldDelegateList(opts, cache.cacher)
	if err != nil {
		return err
	}
	if result.ShouldDelegate {
		return c.Interface.GetList(ctx, key, opts, listObj)
	}
	stored := cache.newListFunc()
	if err := cache.cacher.GetList(ctx, key, opts, stored); err != nil {
		if apierrors.IsResourceExpired(err) && utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
			return c.Interface.GetList(ctx, key, opts, listObj)
		}
		if result.ConsistentRead && storage.IsTooLargeResourceVersion(err) {
			// The cache did not catch up in time: etcd answers.
			return c.Interface.GetList(ctx, key, opts, listObj)
		}
		return err
	}
	return c.convertList(stored, listObj)
}

// convertList fills listObj with the store's form of the items of stored,
// and its resourceVersion, continue token and remaining item count.
func (c *cachedReads) convertList(stored, listObj runtime.Object) error {
	items, err := meta.ExtractListWithAlloc(stored)
	if err != nil {
		return err
	}
	out := make([]runtime.Object, 0, len(items))
	for _, item := range items {
		converted, err := c.convert(item)
		if err != nil {
			return err
		}
		out = append(out, converted)
	}
	if err := meta.SetList(listObj, out); err != nil {
		return err
	}
	from, err := meta.ListAccessor(stored)
	if err != nil {
		return err
	}
	to, err := meta.ListAccessor(listObj)
	if err != nil {
		return err
	}
	to.SetResourceVersion(from.GetResourceVersion())
	to.SetContinue(from.GetContinue())
	to.SetRemainingItemCount(from.GetRemainingItemCount())
	return nil
}

func (c *cachedReads) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	if !cacheable(opts.Predicate) {
		return c.Interface.Watch(ctx, key, opts)
	}
	across := acrossClusters(ctx)
	cache, release, ok := c.caches.Acquire(ctx, !across)
	if !ok {
		return c.Interface.Watch(ctx, key, opts)
	}
	if !utilfeature.DefaultFeatureGate.Enabled(features.WatchList) && opts.SendInitialEvents != nil {
		opts.SendInitialEvents = nil
	}
	w, err := cache.cacher.Watch(ctx, key, opts)
	if err != nil {
		release()
		return nil, err
	}
	if across {
		// The shard's controllers watch every cluster for good: their
		// watches do not keep the cache running. When it stops, they end,
		// and resume (from etcd) at their last resourceVersion.
		release()
		release = func() {}
	}
	cw := &convertingWatch{inner: w, reads: c, release: release, result: make(chan watch.Event), done: make(chan struct{})}
	go cw.run()
	return cw, nil
}

// convertingWatch passes the events of a cache watch on, each object
// converted into the store's form.
type convertingWatch struct {
	inner   watch.Interface
	reads   *cachedReads
	release func()
	result  chan watch.Event
	done    chan struct{}
	stop    sync.Once
}

func (w *convertingWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *convertingWatch) Stop() {
	w.stop.Do(func() {
		close(w.done)
		w.inner.Stop()
	})
}

func (w *convertingWatch) run() {
	defer w.release()
	defer close(w.result)
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-w.inner.ResultChan():
		case <-w.done:
			return
		}
		if !ok {
			return
		}
		out, err := w.reads.convertEvent(ev)
		if err != nil {
			out = watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}
		}
		select {
		case w.result <- out:
		case <-w.done:
			return
		}
		if err != nil {
			w.Stop()
			return
		}
	}
}

// convertEvent converts the object of an event. Bookmarks carry only a
// resourceVersion (and annotations, such as the end of initial events).
func (c *cachedReads) convertEvent(ev watch.Event) (watch.Event, error) {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		obj, err := c.convert(ev.Object)
		if err != nil {
			return ev, err
		}
		return watch.Event{Type: ev.Type, Object: obj}, nil
	case watch.Bookmark:
		from, err := meta.Accessor(ev.Object)
		if err != nil {
			return ev, err
		}
		obj := c.newFunc()
		to, err := meta.Accessor(obj)
		if err != nil {
			return ev, err
		}
		to.SetResourceVersion(from.GetResourceVersion())
		to.SetAnnotations(from.GetAnnotations())
		return watch.Event{Type: ev.Type, Object: obj}, nil
	default:
		return ev, nil
	}
}
