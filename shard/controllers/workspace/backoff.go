package workspace

import (
	"sync"
	"time"

	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// Backoff bounds of following a logical cluster that is not Ready yet, or
// a shard that cannot be reached.
const (
	initialBackoff = 100 * time.Millisecond
	maxBackoff     = 10 * time.Second
	// unavailableMaxBackoff caps the delays of a Workspace whose shard is
	// unknown or cannot be reached: a shard that is down for long is
	// tried every couple of minutes per Workspace, and Shard events
	// retry at once.
	unavailableMaxBackoff = 2 * time.Minute
)

// backoff hands out exponentially growing delays per key. Following a
// logical cluster on another shard polls it with these delays instead of
// watching it; an event of the local LogicalCluster informer makes the
// local case faster. The state is in memory: after a restart polling starts
// again from the initial delay, which is harmless.
type backoff struct {
	initial, max time.Duration

	mu     sync.Mutex
	delays map[reconciler.Key]time.Duration
}

func newBackoff(initial, max time.Duration) *backoff {
	return &backoff{initial: initial, max: max, delays: map[reconciler.Key]time.Duration{}}
}

// next returns the delay before the next attempt for key: initial the
// first time, then twice the previous one, at most max.
func (b *backoff) next(key reconciler.Key) time.Duration {
	return b.nextUpTo(key, b.max)
}

// nextUpTo is next with the cap max instead of the backoff's own, for
// example for a shard that cannot be reached. A delay that grew beyond
// the cap of a later call comes down to it.
func (b *backoff) nextUpTo(key reconciler.Key, max time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.delays[key]
	if ok {
		d = min(2*d, max)
	} else {
		d = min(b.initial, max)
	}
	b.delays[key] = d
	return d
}

// reset starts the delays of key over, for example when the logical
// cluster made progress.
func (b *backoff) reset(key reconciler.Key) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.delays, key)
}

// len returns the number of keys with state, for tests.
func (b *backoff) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.delays)
}
