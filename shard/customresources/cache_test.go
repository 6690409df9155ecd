package customresources

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// fakeValue counts how often the cache stopped and destroyed it.
type fakeValue struct {
	id        int
	stopped   atomic.Int32
	destroyed atomic.Int32
}

func (v *fakeValue) stop()    { v.stopped.Add(1) }
func (v *fakeValue) destroy() { v.destroyed.Add(1) }

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testCache is a cache of fakeValues that counts builds.
type testCache struct {
	*stateCache[*fakeValue]
	builds atomic.Int32
	clock  *fakeClock
}

func newTestCache(maxEntries int, idle time.Duration) *testCache {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	return &testCache{stateCache: newStateCache[*fakeValue](maxEntries, idle, clock.Now), clock: clock}
}

func (c *testCache) get(t *testing.T, key stateKey, version stateVersion) (*fakeValue, func()) {
	t.Helper()
	v, release, err := c.acquire(key, version, func() (*fakeValue, error) {
		return &fakeValue{id: int(c.builds.Add(1))}, nil
	})
	if err != nil {
		t.Fatalf("acquire(%v): %v", key, err)
	}
	return v, release
}

func key(cluster, crd string) stateKey {
	return stateKey{cluster: logicalcluster.Name(cluster), crd: crd}
}

func crdVersion(cluster, rv string) stateVersion {
	return stateVersion{cluster: logicalcluster.Name(cluster), uid: "uid", resourceVersion: rv}
}

func TestCacheBuildsOnce(t *testing.T) {
	c := newTestCache(10, time.Minute)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	values := make([]*fakeValue, 8)
	for i := range values {
		wg.Go(func() {
			v, release, err := c.acquire(key("a", "widgets.example.com"), crdVersion("a", "1"), func() (*fakeValue, error) {
				<-gate
				return &fakeValue{id: int(c.builds.Add(1))}, nil
			})
			if err != nil {
				t.Errorf("acquire: %v", err)
				return
			}
			defer release()
			values[i] = v
		})
	}
	close(gate)
	wg.Wait()
	if n := c.builds.Load(); n != 1 {
		t.Fatalf("built %d times, want 1", n)
	}
	for i, v := range values {
		if v != values[0] {
			t.Errorf("caller %d got value %d, want the shared value %d", i, v.id, values[0].id)
		}
	}
	if v, release := c.get(t, key("a", "widgets.example.com"), crdVersion("a", "1")); v != values[0] {
		t.Errorf("a later acquire got value %d, want %d", v.id, values[0].id)
	} else {
		release()
	}
	if values[0].destroyed.Load() != 0 {
		t.Error("a cached value was destroyed")
	}
}

func TestCacheRebuildsOnNewVersion(t *testing.T) {
	c := newTestCache(10, time.Minute)
	k := key("a", "widgets.example.com")
	old, releaseOld := c.get(t, k, crdVersion("a", "1"))

	// A request still uses the old value: it is stopped at once, destroyed later.
	v2, release := c.get(t, k, crdVersion("a", "2"))
	release()
	if v2 == old {
		t.Fatal("a new CRD version got the old value")
	}
	if old.stopped.Load() != 1 || old.destroyed.Load() != 0 {
		t.Fatalf("while in use: stopped %d destroyed %d, want 1 0", old.stopped.Load(), old.destroyed.Load())
	}
	releaseOld()
	releaseOld() // idempotent
	if old.destroyed.Load() != 1 {
		t.Fatalf("after the last release: destroyed %d, want 1", old.destroyed.Load())
	}

	// A request that looked up the CRD before the update keeps the newer state.
	stale, release := c.get(t, k, crdVersion("a", "1"))
	release()
	if stale != v2 {
		t.Error("a stale resourceVersion replaced the state of a newer one")
	}

	// Another UID is another version too.
	v3, release, err := c.acquire(k, stateVersion{cluster: "a", uid: "other", resourceVersion: "2"}, func() (*fakeValue, error) { return &fakeValue{id: 3}, nil })
	if err != nil || v3 == v2 {
		t.Fatal("a new CRD UID got the old value")
	}
	release()
	if v2.destroyed.Load() != 1 {
		t.Errorf("replaced value destroyed %d times, want 1", v2.destroyed.Load())
	}
	if n := c.len(); n != 1 {
		t.Errorf("len = %d, want 1", n)
	}
}

func TestCacheReleasesIdle(t *testing.T) {
	c := newTestCache(10, time.Minute)
	idle, release := c.get(t, key("a", "widgets.example.com"), crdVersion("a", "1"))
	release()
	busy, releaseBusy := c.get(t, key("b", "widgets.example.com"), crdVersion("b", "1"))

	c.clock.Step(2 * time.Minute)
	// Expiry is lazy: the next acquire sweeps.
	_, release = c.get(t, key("c", "widgets.example.com"), crdVersion("c", "1"))
	release()
	if idle.stopped.Load() != 1 || idle.destroyed.Load() != 1 {
		t.Errorf("idle value: stopped %d destroyed %d, want 1 1", idle.stopped.Load(), idle.destroyed.Load())
	}
	if busy.destroyed.Load() != 0 || busy.stopped.Load() != 0 {
		t.Error("a value in use was released as idle")
	}
	releaseBusy()

	c.clock.Step(2 * time.Minute)
	c.sweep()
	if busy.destroyed.Load() != 1 {
		t.Error("the value that became idle was not released by sweep")
	}
	if n := c.len(); n != 0 {
		t.Errorf("len = %d, want 0", n)
	}
}

func TestCacheRespectsBound(t *testing.T) {
	c := newTestCache(2, time.Hour)
	a, release := c.get(t, key("a", "w"), crdVersion("a", "1"))
	release()
	b, release := c.get(t, key("b", "w"), crdVersion("b", "1"))
	release()
	// Touch a: b is now the least recently used.
	_, release = c.get(t, key("a", "w"), crdVersion("a", "1"))
	release()
	_, release = c.get(t, key("c", "w"), crdVersion("c", "1"))
	release()
	if n := c.len(); n != 2 {
		t.Fatalf("len = %d, want 2", n)
	}
	if b.destroyed.Load() != 1 {
		t.Error("the least recently used value was not destroyed")
	}
	if a.destroyed.Load() != 0 {
		t.Error("a recently used value was destroyed")
	}

	// Values in use are never evicted, however many there are: the bound
	// is on idle values.
	var inUse []*fakeValue
	var releases []func()
	for _, cluster := range []string{"a", "e", "f", "g"} {
		v, rel := c.get(t, key(cluster, "w"), crdVersion(cluster, "1"))
		inUse, releases = append(inUse, v), append(releases, rel)
	}
	_, release = c.get(t, key("d", "w"), crdVersion("d", "1"))
	release()
	for i, v := range inUse {
		if v.stopped.Load() != 0 {
			t.Errorf("value %d in use was evicted", i)
		}
	}
	if n := c.len(); n < 4 {
		t.Errorf("len = %d, want the 4 values in use and up to 2 idle ones", n)
	}
	// Once released, the idle ones beyond the bound go, oldest first.
	for _, rel := range releases {
		rel()
	}
	if n := c.len(); n != 2 {
		t.Errorf("len after releasing = %d, want 2", n)
	}
	if inUse[0].stopped.Load() != 1 || inUse[3].stopped.Load() != 0 {
		t.Errorf("after release: oldest stopped %d, newest stopped %d; want 1 and 0", inUse[0].stopped.Load(), inUse[3].stopped.Load())
	}
}

func TestCacheDoesNotCacheFailures(t *testing.T) {
	c := newTestCache(10, time.Minute)
	k := key("a", "w")
	boom := errors.New("boom")
	if _, _, err := c.acquire(k, crdVersion("a", "1"), func() (*fakeValue, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if n := c.len(); n != 0 {
		t.Fatalf("len = %d after a failed build, want 0", n)
	}
	_, release := c.get(t, k, crdVersion("a", "1"))
	release()
	if n := c.builds.Load(); n != 1 {
		t.Errorf("built %d values, want 1", n)
	}
}

func TestCacheInvalidate(t *testing.T) {
	c := newTestCache(10, time.Minute)
	inA, release := c.get(t, key("a", "w"), crdVersion("a", "1"))
	release()
	inB, release := c.get(t, key("b", "w"), crdVersion("b", "1"))
	release()
	wildcard := stateVersion{cluster: logicalcluster.Wildcard, digest: "v1"}
	inWildcard, release := c.get(t, key("*", "w"), wildcard)
	release()
	other, release := c.get(t, key("a", "other"), crdVersion("a", "1"))
	release()

	c.invalidateKey(key("a", "w"), nil)
	same := func(want stateVersion) func(stateVersion) bool {
		return func(v stateVersion) bool { return v == want }
	}
	c.invalidateKey(key("*", "w"), same(wildcard))
	for name, tc := range map[string]struct {
		v    *fakeValue
		want int32
	}{
		"a/w": {inA, 1}, "b/w": {inB, 0}, "*/w still current": {inWildcard, 0}, "a/other": {other, 0},
	} {
		if got := tc.v.destroyed.Load(); got != tc.want {
			t.Errorf("%s destroyed %d times, want %d", name, got, tc.want)
		}
	}

	c.invalidateKey(key("*", "w"), same(stateVersion{cluster: logicalcluster.Wildcard, digest: "v1,v2"}))
	if inWildcard.destroyed.Load() != 1 {
		t.Error("a wildcard state built from other CRDs was kept")
	}
	if again, release := c.get(t, key("*", "w"), wildcard); again == inWildcard {
		t.Error("the dropped wildcard state was served again")
	} else {
		release()
	}

	c.close()
	for _, v := range []*fakeValue{inB, other} {
		if v.destroyed.Load() != 1 {
			t.Errorf("value %d not destroyed by close", v.id)
		}
	}
}

// TestCacheKeepsStateAcrossStatusUpdates: a later resourceVersion of the
// CRD that serves the same (same spec and accepted names: same digest)
// keeps the state in use, so its watches go on; a spec change replaces it,
// and an older lookup never replaces a newer state.
func TestCacheKeepsStateAcrossStatusUpdates(t *testing.T) {
	c := newTestCache(10, time.Hour)
	v := func(rv, digest string) stateVersion {
		return stateVersion{cluster: "a", uid: "uid", resourceVersion: rv, digest: digest}
	}
	first, release := c.get(t, key("a", "w"), v("10", "spec-1"))
	defer release()

	// Status update (conditions): same digest, later resourceVersion.
	same, releaseSame := c.get(t, key("a", "w"), v("11", "spec-1"))
	releaseSame()
	c.update(key("a", "w"), v("12", "spec-1"))
	if same != first || first.stopped.Load() != 0 || c.builds.Load() != 1 {
		t.Fatalf("a status update replaced the state: same=%v stopped=%d builds=%d", same == first, first.stopped.Load(), c.builds.Load())
	}
	// A request that looked the CRD up before the status update is served
	// by the state too.
	old, releaseOld := c.get(t, key("a", "w"), v("11", "spec-1"))
	releaseOld()
	if old != first {
		t.Error("an older lookup of the same spec got another state")
	}

	// Spec change: a new digest replaces the state and ends its watches.
	c.update(key("a", "w"), v("13", "spec-2"))
	if first.stopped.Load() != 1 {
		t.Fatal("a spec change kept the old state")
	}
	second, releaseSecond := c.get(t, key("a", "w"), v("13", "spec-2"))
	releaseSecond()
	// A lookup of the older spec does not replace the newer state.
	older, releaseOlder := c.get(t, key("a", "w"), v("12", "spec-1"))
	releaseOlder()
	if older != second || second.stopped.Load() != 0 {
		t.Error("an older lookup replaced the state of a newer spec")
	}
}
