package workspace

import (
	"strconv"
	"sync"
	"time"

	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// versionTTL bounds how long a version noted in versions counts. An
// informer normally shows a version of the shard within milliseconds; one
// that lags longer than this only costs what it did before versions
// existed (a conflict, a GET).
const versionTTL = time.Minute

// versions remembers, per key and for at most versionTTL, the newest
// resourceVersion the controller read from or wrote to the server of an
// object, so that a reconcile can tell that an informer's copy is older
// than what the controller already knows. resourceVersions are compared as
// numbers: they are revisions of the shard's one etcd, and the newer of
// two versions of one etcd key has the higher one, also when the object
// was deleted and created again in between (so UIDs do not matter).
//
// An entry lives from a write or read until the next reconcile of its key
// sees an informer copy that has caught up (normally the one the event of
// that very write starts), the key is gone, or versionTTL passes. Expired
// entries are swept when new ones are noted, so the map never holds more
// than the keys noted during the last 2*versionTTL, whatever happens to
// their reconciles. Nothing is kept per Workspace beyond that.
type versions struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[reconciler.Key]version
	swept   time.Time
}

type version struct {
	rv uint64
	at time.Time
}

func newVersions(ttl time.Duration, now func() time.Time) *versions {
	return &versions{ttl: ttl, now: now, entries: map[reconciler.Key]version{}}
}

// note records that the object of key exists at least at resourceVersion
// rv. A resourceVersion that does not parse is ignored.
func (v *versions) note(key reconciler.Key, rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	if now.Sub(v.swept) >= v.ttl {
		for k, e := range v.entries {
			if now.Sub(e.at) >= v.ttl {
				delete(v.entries, k)
			}
		}
		v.swept = now
	}
	if e, ok := v.entries[key]; ok && e.rv > n && now.Sub(e.at) < v.ttl {
		return
	}
	v.entries[key] = version{rv: n, at: now}
}

// newer tells whether a version of the object of key newer than rv was
// noted less than ttl ago, and how long that note still counts. An entry
// that rv has caught up with, or that expired, is dropped.
func (v *versions) newer(key reconciler.Key, rv string) (time.Duration, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.entries[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	left := e.at.Add(v.ttl).Sub(v.now())
	if left <= 0 || (err == nil && n >= e.rv) {
		delete(v.entries, key)
		return 0, false
	}
	if err != nil {
		// Not comparable: do not hold the caller back.
		return 0, false
	}
	return left, true
}

// forget drops what is noted for key.
func (v *versions) forget(key reconciler.Key) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.entries, key)
}

// len returns the number of keys with an entry, for tests.
func (v *versions) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.entries)
}
