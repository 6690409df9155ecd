package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/tessera-dev/tessera/pkg/client/informers"
)

// limiter is a workqueue rate limiter that records its calls and delays
// every retry by one second.
type limiter struct {
	mu      sync.Mutex
	retries map[Key]int
	forgets map[Key]int
}

func newLimiter() *limiter {
	return &limiter{retries: map[Key]int{}, forgets: map[Key]int{}}
}

func (l *limiter) When(key Key) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retries[key]++
	return time.Second
}

func (l *limiter) NumRequeues(key Key) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retries[key]
}

func (l *limiter) Forget(key Key) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgets[key]++
	l.retries[key] = 0
}

func (l *limiter) counts(key Key) (retries, forgets int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retries[key], l.forgets[key]
}

// calls records when each key was reconciled, in fake time.
type calls struct {
	mu    sync.Mutex
	start time.Time
	at    map[Key][]time.Duration
}

func newCalls() *calls { return &calls{start: time.Now(), at: map[Key][]time.Duration{}} }

func (c *calls) record(key Key) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[key] = append(c.at[key], time.Since(c.start))
	return len(c.at[key])
}

func (c *calls) of(key Key) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.at[key]...)
}

// run runs c until the test ends.
func run(t *testing.T, c *Controller) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func TestReconcileOutcomes(t *testing.T) {
	errBoom := errors.New("boom")
	key := Key{Cluster: "a", Namespace: "ns", Name: "x"}
	for _, tc := range []struct {
		name string
		// reconcile answers the n-th call (from 1).
		reconcile func(n int) (Result, error)
		// wait is how long the test lets the controller run.
		wait time.Duration
		// wantCalls are the fake times of the reconciles.
		wantCalls []time.Duration
		// wantRetries is how often the rate limiter was asked for a delay
		// without being told to forget since.
		wantRetries, wantForgets int
	}{
		{
			name:        "success is not retried",
			reconcile:   func(int) (Result, error) { return Result{}, nil },
			wait:        time.Hour,
			wantCalls:   []time.Duration{0},
			wantForgets: 1,
		},
		{
			name: "errors are retried with rate limiting until success",
			reconcile: func(n int) (Result, error) {
				if n < 3 {
					return Result{}, fmt.Errorf("attempt %d: %w", n, errBoom)
				}
				return Result{}, nil
			},
			wait:        time.Hour,
			wantCalls:   []time.Duration{0, time.Second, 2 * time.Second},
			wantForgets: 1,
		},
		{
			name:        "errors keep being retried",
			reconcile:   func(n int) (Result, error) { return Result{}, errBoom },
			wait:        3*time.Second + time.Millisecond,
			wantCalls:   []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second},
			wantRetries: 4,
		},
		{
			name:        "terminal errors are not retried",
			reconcile:   func(int) (Result, error) { return Result{}, TerminalError(errBoom) },
			wait:        time.Hour,
			wantCalls:   []time.Duration{0},
			wantForgets: 1,
		},
		{
			name:        "wrapped terminal errors are not retried",
			reconcile:   func(int) (Result, error) { return Result{}, fmt.Errorf("context: %w", TerminalError(errBoom)) },
			wait:        time.Hour,
			wantCalls:   []time.Duration{0},
			wantForgets: 1,
		},
		{
			name: "requeue after",
			reconcile: func(n int) (Result, error) {
				if n < 3 {
					return Result{RequeueAfter: time.Minute}, nil
				}
				return Result{}, nil
			},
			wait:        time.Hour,
			wantCalls:   []time.Duration{0, time.Minute, 2 * time.Minute},
			wantForgets: 3,
		},
		{
			name: "an error wins over requeue after",
			reconcile: func(n int) (Result, error) {
				if n == 1 {
					return Result{RequeueAfter: time.Minute}, errBoom
				}
				return Result{}, nil
			},
			wait:        time.Hour,
			wantCalls:   []time.Duration{0, time.Second},
			wantForgets: 1,
		},
		{
			name: "panics are recovered and retried",
			reconcile: func(n int) (Result, error) {
				if n == 1 {
					panic("bug")
				}
				return Result{}, nil
			},
			wait:        time.Hour,
			wantCalls:   []time.Duration{0, time.Second},
			wantForgets: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls, limiter := newCalls(), newLimiter()
				c := New("test", Func(func(_ context.Context, k Key) (Result, error) {
					return tc.reconcile(calls.record(k))
				}), Options{RateLimiter: limiter})
				run(t, c)
				c.Enqueue(key)
				time.Sleep(tc.wait)
				synctest.Wait()

				got := calls.of(key)
				if fmt.Sprint(got) != fmt.Sprint(tc.wantCalls) {
					t.Errorf("reconciled at %v, want %v", got, tc.wantCalls)
				}
				retries, forgets := limiter.counts(key)
				if retries != tc.wantRetries || forgets != tc.wantForgets {
					t.Errorf("rate limiter: %d pending retries and %d forgets, want %d and %d", retries, forgets, tc.wantRetries, tc.wantForgets)
				}
			})
		})
	}
}

func TestTerminalError(t *testing.T) {
	if TerminalError(nil) != nil {
		t.Errorf("TerminalError(nil) != nil")
	}
	base := errors.New("base")
	err := fmt.Errorf("wrapped: %w", TerminalError(base))
	if !IsTerminal(err) || !errors.Is(err, base) {
		t.Errorf("IsTerminal = %v, errors.Is(base) = %v", IsTerminal(err), errors.Is(err, base))
	}
	if IsTerminal(base) || IsTerminal(nil) {
		t.Errorf("plain errors are not terminal")
	}
}

func TestWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running, most atomic.Int32
		release := make(chan struct{})
		c := New("test", Func(func(ctx context.Context, _ Key) (Result, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			<-release
			return Result{}, nil
		}), Options{Workers: 3})
		run(t, c)
		for i := range 5 {
			c.Enqueue(Key{Cluster: "a", Name: fmt.Sprint(i)})
		}
		// The same key is never reconciled twice at once, nor queued twice.
		c.Enqueue(Key{Cluster: "a", Name: "0"})
		synctest.Wait()
		if got := running.Load(); got != 3 {
			t.Errorf("%d reconciles in parallel, want 3 workers busy", got)
		}
		close(release)
		synctest.Wait()
		if most.Load() != 3 || c.Len() != 0 {
			t.Errorf("at most %d in parallel, %d left in queue", most.Load(), c.Len())
		}
	})
}

func TestRunWaitsForCaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var synced atomic.Bool
		var reconciled atomic.Int32
		c := New("test", Func(func(context.Context, Key) (Result, error) {
			reconciled.Add(1)
			return Result{}, nil
		}), Options{})
		c.WaitFor(synced.Load)
		run(t, c)
		c.Enqueue(Key{Cluster: "a", Name: "x"})
		time.Sleep(time.Minute)
		synctest.Wait()
		if reconciled.Load() != 0 {
			t.Fatalf("reconciled before the caches synced")
		}
		synced.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		if reconciled.Load() != 1 {
			t.Errorf("reconciled %d times after the caches synced, want 1", reconciled.Load())
		}
	})
}

func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New("test", Func(func(context.Context, Key) (Result, error) { return Result{}, nil }), Options{})
		run(t, c)
		synctest.Wait()
		if err := c.Run(t.Context()); err == nil {
			t.Errorf("second Run succeeded")
		}
	})
}

// TestLoggerCarriesCluster checks that the reconciler's logger and the
// controller's error logs name the controller and the logical cluster.
func TestLoggerCarriesCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
		ctx := klog.NewContext(t.Context(), logger)
		c := New("logs", Func(func(ctx context.Context, key Key) (Result, error) {
			klog.FromContext(ctx).Info("Reconciling")
			return Result{}, TerminalError(errors.New("no such thing"))
		}), Options{})
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- c.Run(ctx) }()
		c.Enqueue(Key{Cluster: "root:org", Namespace: "ns", Name: "x"})
		synctest.Wait()
		cancel()
		<-done

		log := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
		for _, want := range []string{
			`INFO Reconciling controller="logs" cluster="root:org" object="ns/x"`,
			`ERROR Reconciler failed, not retrying err="terminal error: no such thing" controller="logs" cluster="root:org" object="ns/x"`,
		} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %s:\n%q", want, log)
			}
		}
	})
}

// TestWatchUnsynced: a controller runs while an informer it watches
// without waiting cannot list yet (its server does not answer), and gets
// that informer's events once it lists.
func TestWatchUnsynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answer := make(chan struct{})
		watcher := watch.NewFake()
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
				select {
				case <-answer:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.ConfigMap{*configMap("b", "ns", "late")}}, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watcher, nil },
		}
		informer := informers.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, nil)
		var mu sync.Mutex
		var seen []string
		c := New("test", Func(func(_ context.Context, key Key) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, key.String())
			return Result{}, nil
		}), Options{})
		if err := c.WatchUnsynced(informer, c.EnqueueHandler()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go informer.RunWithContext(ctx)
		run(t, c)
		c.Enqueue(Key{Cluster: "a", Namespace: "ns", Name: "now"})
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		if !slices.Equal(seen, []string{"a|ns/now"}) {
			t.Errorf("reconciled %v while the informer was listing, want a|ns/now", seen)
		}
		mu.Unlock()
		close(answer)
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		if !slices.Equal(seen, []string{"a|ns/now", "b|ns/late"}) || !informer.HasSynced() {
			t.Errorf("reconciled %v once the informer listed, want a|ns/now and b|ns/late", seen)
		}
		mu.Unlock()
		cancel()
		watcher.Stop()
		synctest.Wait()
	})
}
