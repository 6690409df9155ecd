package reconciler

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Options configure a Controller.
type Options struct {
	// Workers is the number of keys reconciled in parallel; at least 1.
	Workers int
	// RateLimiter spaces the retries of failing keys. The default is
	// workqueue.DefaultTypedControllerRateLimiter: per-key exponential
	// backoff from 5ms to 1000s, and 10 retries per second overall.
	RateLimiter workqueue.TypedRateLimiter[Key]
}

// Controller runs a Reconciler over a rate-limited queue of Keys.
type Controller struct {
	name       string
	reconciler Reconciler
	workers    int
	queue      workqueue.TypedRateLimitingInterface[Key]

	mu       sync.Mutex
	started  bool
	checkers []cache.DoneChecker
	syncs    []cache.InformerSynced
}

// New returns a controller named name (used in logs and queue metrics) that
// reconciles with r.
func New(name string, r Reconciler, opts Options) *Controller {
	rateLimiter := opts.RateLimiter
	if rateLimiter == nil {
		rateLimiter = workqueue.DefaultTypedControllerRateLimiter[Key]()
	}
	return &Controller{
		name:       name,
		reconciler: r,
		workers:    max(opts.Workers, 1),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter, workqueue.TypedRateLimitingQueueConfig[Key]{
			Name: name,
		}),
	}
}

// Name returns the controller's name.
func (c *Controller) Name() string { return c.name }

// Enqueue adds key to the queue; a key already waiting is not added twice.
func (c *Controller) Enqueue(key Key) { c.queue.Add(key) }

// EnqueueAfter adds key to the queue after delay.
func (c *Controller) EnqueueAfter(key Key, delay time.Duration) { c.queue.AddAfter(key, delay) }

// Len returns the number of keys waiting in the queue.
func (c *Controller) Len() int { return c.queue.Len() }

// Watch adds handler to informer, and makes Run wait until the informer has
// synced and handler has seen its initial list. Call it before Run.
func (c *Controller) Watch(informer cache.SharedInformer, handler cache.ResourceEventHandler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("controller %s: Watch called after Run", c.name)
	}
	registration, err := informer.AddEventHandler(handler)
	if err != nil {
		return fmt.Errorf("controller %s: adding event handler: %w", c.name, err)
	}
	c.checkers = append(c.checkers, informer.HasSyncedChecker(), registration.HasSyncedChecker())
	return nil
}

// WatchUnsynced adds handler to informer without making Run wait for it:
// for a reconciler that works with part of its sources while another is
// still listing (one unreachable server must not stop the rest). Such a
// reconciler must not take an object's absence from informer for its
// deletion before informer has synced. Call it before Run.
func (c *Controller) WatchUnsynced(informer cache.SharedInformer, handler cache.ResourceEventHandler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("controller %s: WatchUnsynced called after Run", c.name)
	}
	if _, err := informer.AddEventHandler(handler); err != nil {
		return fmt.Errorf("controller %s: adding event handler: %w", c.name, err)
	}
	return nil
}

// WaitFor makes Run wait for more caches, typically of informers the
// reconciler only reads through listers (pass their HasSynced). Call it
// before Run.
func (c *Controller) WaitFor(syncs ...cache.InformerSynced) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.syncs = append(c.syncs, syncs...)
}

// Run waits for the caches, reconciles with the configured number of
// workers until ctx is done, then shuts the queue down and waits for the
// reconciles in flight. It fails only if the controller has already run.
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return fmt.Errorf("controller %s has already run", c.name)
	}
	c.started = true
	checkers, syncs := slices.Clone(c.checkers), slices.Clone(c.syncs)
	c.mu.Unlock()
	defer c.queue.ShutDown()

	logger := klog.LoggerWithValues(klog.FromContext(ctx), "controller", c.name)
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting controller", "workers", c.workers)
	defer logger.Info("Stopped controller")

	// Watched informers and handlers report their sync on a channel; the
	// functions given to WaitFor are polled.
	if len(checkers) > 0 && !cache.WaitFor(ctx, "caches", checkers...) {
		return nil
	}
	if len(syncs) > 0 && !cache.WaitForNamedCacheSyncWithContext(ctx, syncs...) {
		return nil
	}

	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

// processNext reconciles one key, and tells whether to go on.
func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if ctx.Err() != nil {
		return false
	}
	c.reconcileKey(ctx, key)
	return true
}

// reconcileKey reconciles key and decides whether and when it comes back.
func (c *Controller) reconcileKey(ctx context.Context, key Key) {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "cluster", key.Cluster.String(), "object", klog.KRef(key.Namespace, key.Name))
	ctx = klog.NewContext(ctx, logger)

	result, err := c.reconcile(ctx, key)
	switch {
	case err != nil && IsTerminal(err):
		c.queue.Forget(key)
		logger.Error(err, "Reconciler failed, not retrying")
	case err != nil:
		c.queue.AddRateLimited(key)
		logger.Error(err, "Reconciler failed, retrying", "retries", c.queue.NumRequeues(key))
	case result.RequeueAfter > 0:
		c.queue.Forget(key)
		c.queue.AddAfter(key, result.RequeueAfter)
		logger.V(4).Info("Reconciled, requeueing", "after", result.RequeueAfter)
	default:
		c.queue.Forget(key)
		logger.V(4).Info("Reconciled")
	}
}

// errPanic is wrapped by the error of a reconcile that panicked.
var errPanic = errors.New("reconciler panicked")

// reconcile calls the reconciler and turns a panic into an error that is
// retried, so that one object cannot take down a shard's controller for
// every logical cluster.
func (c *Controller) reconcile(ctx context.Context, key Key) (result Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v\n%s", errPanic, r, debug.Stack())
		}
	}()
	return c.reconciler.Reconcile(ctx, key)
}
