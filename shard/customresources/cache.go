package customresources

import (
	"container/list"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// stateKey identifies a cached serving state: a CRD, by name, in a logical
// cluster, or in logicalcluster.Wildcard for requests across all clusters.
type stateKey struct {
	cluster logicalcluster.Name
	crd     string
}

// stateVersion identifies what a serving state was built from: a CRD
// object, or for a wildcard state the synthetic CRD made of all CRDs of its
// name.
type stateVersion struct {
	// cluster is the logical cluster the CRD lives in; logicalcluster.Wildcard
	// for a wildcard state.
	cluster         logicalcluster.Name
	uid             types.UID
	resourceVersion string
	// digest identifies a wildcard state's synthetic CRD (wildcardVersion).
	digest string
}

// supersedes tells whether v is a later version of the same CRD object than
// other: a request that looked up the CRD just before an update must not
// replace the state built from the update.
func (v stateVersion) supersedes(other stateVersion) bool {
	if v.cluster != other.cluster || v.uid != other.uid {
		return false
	}
	if v.resourceVersion == "" && other.resourceVersion == "" {
		return false
	}
	mine, err1 := strconv.ParseUint(v.resourceVersion, 10, 64)
	theirs, err2 := strconv.ParseUint(other.resourceVersion, 10, 64)
	return err1 == nil && err2 == nil && mine > theirs
}

// sameServing tells whether a state built from v serves other as well: the
// same CRD object with the same spec and accepted names (digest), whatever
// its resourceVersion. Status updates (conditions, stored versions) then
// keep the state, and the watches it serves, as kube-apiserver keeps a
// CRD's storage when only its status changes.
func (v stateVersion) sameServing(other stateVersion) bool {
	return v.cluster == other.cluster && v.uid == other.uid && v.digest != "" && v.digest == other.digest
}

// releasable is a value the cache holds.
type releasable interface {
	// stop ends the long-running requests served from the value. It is
	// called once, when the value has left the cache.
	stop()
	// destroy frees the value. It is called once, after stop, when no
	// request uses the value any more.
	destroy()
}

// cacheEntry is one value of the cache and its bookkeeping. Every field but
// key, version and ready is guarded by the cache's mutex; value is written
// before ready is closed and only read after.
type cacheEntry[V releasable] struct {
	key     stateKey
	version stateVersion
	ready   chan struct{}
	value   V
	err     error

	elem      *list.Element
	refs      int
	lastUsed  time.Time
	built     bool
	retired   bool
	stopped   bool
	destroyed bool
}

// stateCache is an LRU of values built on demand, with idle expiry and
// reference counting, that keeps at most maxEntries idle values (no
// request uses them) besides those in use, which it never evicts: a value
// that leaves the cache (replaced, evicted while idle, expired,
// invalidated) is stopped at once and destroyed when its last user
// releases it. Expiry is lazy (on acquire) or driven by sweep; the cache
// starts no goroutine.
//
// Cache audit (issue 9): cluster-keyed: stateKey holds the logical cluster
// and the version its UID and resourceVersion.
type stateCache[V releasable] struct {
	maxEntries int
	idle       time.Duration
	now        func() time.Time

	mu        sync.Mutex
	entries   map[stateKey]*cacheEntry[V]
	lru       *list.List // of *cacheEntry[V], most recently used first
	lastSweep time.Time
}

func newStateCache[V releasable](maxEntries int, idle time.Duration, now func() time.Time) *stateCache[V] {
	return &stateCache[V]{
		maxEntries: max(maxEntries, 1),
		idle:       idle,
		now:        now,
		entries:    map[stateKey]*cacheEntry[V]{},
		lru:        list.New(),
		lastSweep:  now(),
	}
}

// acquire returns the value cached for key if it was built from version
// (or a later resourceVersion of the same CRD), and otherwise builds it
// with build, replacing any value built from another version. Concurrent callers for the same key and version share one build.
// A failed build is not cached. The caller must call release when it no
// longer uses the value.
func (c *stateCache[V]) acquire(key stateKey, version stateVersion, build func() (V, error)) (value V, release func(), err error) {
	c.mu.Lock()
	now := c.now()
	var dropped []*cacheEntry[V]
	if now.Sub(c.lastSweep) >= c.sweepInterval() {
		dropped = c.sweepLocked(now)
	}
	e := c.entries[key]
	switch {
	case e == nil || e.version == version || e.version.supersedes(version):
	case e.version.sameServing(version):
		// A later resourceVersion that serves the same: remember it, so the
		// next request compares resourceVersions only.
		e.version = version
	default:
		dropped = append(dropped, c.retireLocked(e))
		e = nil
	}
	building := e == nil
	if building {
		e = &cacheEntry[V]{key: key, version: version, ready: make(chan struct{})}
		e.elem = c.lru.PushFront(e)
		c.entries[key] = e
		dropped = append(dropped, c.evictLocked()...)
	} else {
		c.lru.MoveToFront(e.elem)
	}
	e.refs++
	e.lastUsed = now
	c.mu.Unlock()
	c.settle(dropped...)

	if building {
		v, err := build()
		c.mu.Lock()
		e.value, e.err, e.built = v, err, err == nil
		if err != nil {
			c.retireLocked(e)
		}
		close(e.ready)
		c.mu.Unlock()
		// The entry may have left the cache while it was being built.
		c.settle(e)
	} else {
		<-e.ready
	}
	release = c.releaser(e)
	if e.err != nil {
		release()
		var zero V
		return zero, nil, e.err
	}
	return e.value, release, nil
}

// releaser returns the function that gives back one reference to e.
func (c *stateCache[V]) releaser(e *cacheEntry[V]) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			e.refs--
			e.lastUsed = c.now()
			var dropped []*cacheEntry[V]
			if e.refs == 0 {
				dropped = c.evictLocked()
			}
			c.mu.Unlock()
			c.settle(append(dropped, e)...)
		})
	}
}

// has tells whether a value is cached for key.
func (c *stateCache[V]) has(key stateKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key] != nil
}

// invalidateKey drops the value cached for key unless keep, when not nil,
// accepts the version it was built from.
func (c *stateCache[V]) invalidateKey(key stateKey, keep func(stateVersion) bool) {
	c.mu.Lock()
	var dropped []*cacheEntry[V]
	if e := c.entries[key]; e != nil && (keep == nil || !keep(e.version)) {
		dropped = append(dropped, c.retireLocked(e))
	}
	c.mu.Unlock()
	c.settle(dropped...)
}

// update drops the value cached for key unless it serves version as well
// (stateVersion.sameServing), in which case it takes version as its own.
func (c *stateCache[V]) update(key stateKey, version stateVersion) {
	c.mu.Lock()
	var dropped []*cacheEntry[V]
	if e := c.entries[key]; e != nil {
		switch {
		case e.version == version || e.version.supersedes(version):
		case e.version.sameServing(version):
			e.version = version
		default:
			dropped = append(dropped, c.retireLocked(e))
		}
	}
	c.mu.Unlock()
	c.settle(dropped...)
}

// sweep drops the values that have been idle for the idle timeout.
func (c *stateCache[V]) sweep() {
	c.mu.Lock()
	dropped := c.sweepLocked(c.now())
	c.mu.Unlock()
	c.settle(dropped...)
}

// close drops every value.
func (c *stateCache[V]) close() {
	c.mu.Lock()
	dropped := make([]*cacheEntry[V], 0, len(c.entries))
	for _, e := range c.entries {
		dropped = append(dropped, c.retireLocked(e))
	}
	c.mu.Unlock()
	c.settle(dropped...)
}

// len returns the number of cached values.
func (c *stateCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// sweepInterval is how often acquire looks for idle values.
func (c *stateCache[V]) sweepInterval() time.Duration {
	return max(c.idle/4, time.Second)
}

func (c *stateCache[V]) sweepLocked(now time.Time) []*cacheEntry[V] {
	c.lastSweep = now
	var dropped []*cacheEntry[V]
	for el := c.lru.Back(); el != nil; {
		e := el.Value.(*cacheEntry[V])
		el = el.Prev()
		if e.built && e.refs == 0 && now.Sub(e.lastUsed) >= c.idle {
			dropped = append(dropped, c.retireLocked(e))
		}
	}
	return dropped
}

// evictLocked drops least recently used idle values until at most
// maxEntries values are idle. Values in use are never dropped: they serve
// requests and watches in flight, whose number bounds them, and dropping
// one would end its watches.
func (c *stateCache[V]) evictLocked() []*cacheEntry[V] {
	if len(c.entries) <= c.maxEntries {
		return nil
	}
	idle := 0
	for el := c.lru.Front(); el != nil; el = el.Next() {
		if el.Value.(*cacheEntry[V]).refs == 0 {
			idle++
		}
	}
	var dropped []*cacheEntry[V]
	for el := c.lru.Back(); el != nil && idle > c.maxEntries; {
		e := el.Value.(*cacheEntry[V])
		el = el.Prev()
		if e.refs == 0 {
			dropped = append(dropped, c.retireLocked(e))
			idle--
		}
	}
	return dropped
}

// retireLocked takes e out of the cache. settle must be called on it
// afterwards, without the lock.
func (c *stateCache[V]) retireLocked(e *cacheEntry[V]) *cacheEntry[V] {
	if e.retired {
		return e
	}
	e.retired = true
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
	c.lru.Remove(e.elem)
	return e
}

// settle stops retired values and destroys those nobody uses any more. It
// calls into the values without holding the lock.
func (c *stateCache[V]) settle(entries ...*cacheEntry[V]) {
	for _, e := range entries {
		c.mu.Lock()
		stop := e.retired && e.built && !e.stopped
		e.stopped = e.stopped || stop
		c.mu.Unlock()
		if stop {
			e.value.stop()
		}
		c.mu.Lock()
		destroy := e.stopped && e.refs == 0 && !e.destroyed
		e.destroyed = e.destroyed || destroy
		c.mu.Unlock()
		if destroy {
			e.value.destroy()
		}
	}
}
