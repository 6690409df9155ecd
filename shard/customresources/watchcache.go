package customresources

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/client/v3/kubernetes"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	genericstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/tessera-dev/tessera/shard/storage"
)

// Defaults of the shared custom-resource watch caches.
const (
	// DefaultWatchCacheIdle is how long the watch cache of a group/resource
	// is kept once no list or watch uses it.
	DefaultWatchCacheIdle = 5 * time.Minute
	// watchCacheReadyWait is how long a list or watch that starts a watch
	// cache waits for its initial list before reading etcd instead.
	watchCacheReadyWait = 5 * time.Second
)

// watchCaches keeps one storage.SharedCache per custom-resource
// group/resource, for all logical clusters and CRDs of that name: started
// by the first list or watch of the group/resource, stopped once no request
// has used it for idle. Nothing is started per logical cluster or per CRD;
// a group/resource nobody lists or watches costs nothing.
type watchCaches struct {
	client *kubernetes.Client
	idle   time.Duration

	mu        sync.Mutex
	byPrefix  map[string]*watchCacheEntry
	compactor compactor
	closed    bool
}

// compactor is etcd3's compactor without compaction: it follows the
// revision etcd was compacted to, which the caches need to refuse lists of
// older revisions as etcd does.
type compactor interface {
	etcd3.Compactor
	Stop()
}

type watchCacheEntry struct {
	cache    *storage.SharedCache
	close    func()
	users    int
	lastUsed time.Time
}

func newWatchCaches(client *kubernetes.Client) *watchCaches {
	return &watchCaches{client: client, idle: DefaultWatchCacheIdle, byPrefix: map[string]*watchCacheEntry{}}
}

// source returns the CacheSource of the stores of one resource prefix.
func (w *watchCaches) source(config *storagebackend.ConfigForResource, resourcePrefix string) storage.CacheSource {
	return &cacheSource{caches: w, config: *config, prefix: resourcePrefix}
}

type cacheSource struct {
	caches *watchCaches
	config storagebackend.ConfigForResource
	prefix string
}

func (s *cacheSource) Acquire(ctx context.Context, start bool) (*storage.SharedCache, func(), bool) {
	e, err := s.caches.get(s, start)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Serving from etcd", "resource", s.config.GroupResource)
	}
	if e == nil {
		return nil, nil, false
	}
	var once sync.Once
	release := func() { once.Do(func() { s.caches.put(e) }) }
	if e.cache.Ready() {
		return e.cache, release, true
	}
	if start {
		// A cache just started lists every cluster's objects once; wait
		// for that rather than read etcd for each of the requests that
		// come meanwhile (the informers of many clusters start together).
		wait, cancel := context.WithTimeout(ctx, watchCacheReadyWait)
		defer cancel()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for !e.cache.Ready() {
			select {
			case <-wait.Done():
				release()
				return nil, nil, false
			case <-tick.C:
			}
		}
		return e.cache, release, true
	}
	release()
	return nil, nil, false
}

// get returns the entry of s's prefix with one more user, starting it when
// start is set.
func (w *watchCaches) get(s *cacheSource, start bool) (*watchCacheEntry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, nil
	}
	e, ok := w.byPrefix[s.prefix]
	if !ok {
		if !start {
			return nil, nil
		}
		var err error
		if e, err = w.start(s); err != nil {
			return nil, err
		}
		w.byPrefix[s.prefix] = e
	}
	e.users++
	return e, nil
}

func (w *watchCaches) put(e *watchCacheEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e.users--
	e.lastUsed = time.Now()
}

// start builds the etcd3 store that reads the prefix as stored and the
// cache on it. It is called with w.mu held.
func (w *watchCaches) start(s *cacheSource) (*watchCacheEntry, error) {
	if w.compactor == nil {
		w.compactor = etcd3.NewCompactor(w.client.Client, 0, clock.RealClock{}, nil)
	}
	transformer := s.config.Transformer
	if transformer == nil {
		transformer = identity.NewEncryptCheckTransformer()
	}
	codec := rawStorageCodec()
	newFunc := func() runtime.Object { return &unstructured.Unstructured{} }
	newListFunc := func() runtime.Object { return &unstructured.UnstructuredList{} }
	versioner := genericstorage.APIObjectVersioner{}
	raw, err := etcd3.New(w.client, w.compactor, codec, newFunc, newListFunc, s.config.Prefix, s.prefix,
		s.config.GroupResource, transformer, s.config.LeaseManagerConfig, etcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		return nil, fmt.Errorf("creating the etcd3 store of the watch cache of %s: %w", s.config.GroupResource, err)
	}
	cache, err := storage.NewSharedCache(storage.SharedCacheConfig{
		Storage:             raw,
		GroupResource:       s.config.GroupResource,
		ResourcePrefix:      s.prefix,
		Codec:               codec,
		NewFunc:             newFunc,
		NewListFunc:         newListFunc,
		EventsHistoryWindow: s.config.EventsHistoryWindow,
	})
	if err != nil {
		raw.Close()
		return nil, err
	}
	return &watchCacheEntry{cache: cache, close: func() { cache.Stop(); raw.Close() }}, nil
}

// sweep stops the caches unused for idle.
func (w *watchCaches) sweep(now time.Time) {
	var stop []*watchCacheEntry
	w.mu.Lock()
	for prefix, e := range w.byPrefix {
		if e.users == 0 && now.Sub(e.lastUsed) >= w.idle {
			delete(w.byPrefix, prefix)
			stop = append(stop, e)
		}
	}
	w.mu.Unlock()
	for _, e := range stop {
		e.close()
	}
}

// running returns how many caches run.
func (w *watchCaches) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byPrefix)
}

// Run stops idle caches until ctx ends, then all of them.
func (w *watchCaches) run(ctx context.Context) {
	tick := time.NewTicker(max(w.idle/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			w.close()
			return
		case now := <-tick.C:
			w.sweep(now)
		}
	}
}

// close stops every cache; later requests read etcd.
func (w *watchCaches) close() {
	w.mu.Lock()
	w.closed = true
	entries := w.byPrefix
	w.byPrefix = map[string]*watchCacheEntry{}
	c := w.compactor
	w.compactor = nil
	w.mu.Unlock()
	for _, e := range entries {
		e.close()
	}
	if c != nil {
		c.Stop()
	}
}
