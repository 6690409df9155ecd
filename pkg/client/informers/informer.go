package informers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// minimumResyncPeriod is the smallest resync period a handler can ask for,
// as in client-go.
const minimumResyncPeriod = time.Second

// NewSharedIndexInformer returns a cache.SharedIndexInformer for lw that is
// safe on /clusters/*: its store and FIFO key objects with KeyFunc
// (cluster|namespace/name), it always has the ClusterIndexers besides
// indexers (which must not reuse their names), and lw is wrapped with
// NoWatchList. It behaves like client-go's shared informer otherwise:
// handlers may be added before or after Run, with their own resync periods,
// and each gets its notifications in order from its own unbounded buffer.
func NewSharedIndexInformer(lw cache.ListerWatcher, exampleObject runtime.Object, resync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
	return NewSharedIndexInformerWithOptions(lw, exampleObject, cache.SharedIndexInformerOptions{
		ResyncPeriod: resync,
		Indexers:     indexers,
	})
}

// NewSharedIndexInformerWithOptions is NewSharedIndexInformer with the
// options of client-go's shared informer. ObjectDescription names the
// objects in logs (default: the Go type of exampleObject); Identifier and
// InformerMetricsProvider enable store and FIFO metrics.
func NewSharedIndexInformerWithOptions(lw cache.ListerWatcher, exampleObject runtime.Object, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	indexers := ClusterIndexers()
	maps.Copy(indexers, options.Indexers)
	maps.Copy(indexers, ClusterIndexers())
	description := options.ObjectDescription
	if description == "" {
		description = fmt.Sprintf("%T", exampleObject)
	}
	realClock := clock.RealClock{}
	return &sharedIndexInformer{
		lw:                   NoWatchList(lw),
		objectType:           exampleObject,
		description:          description,
		identifier:           options.Identifier,
		metricsProvider:      options.InformerMetricsProvider,
		indexer:              NewIndexer(KeyFunc, indexers, storeResourceVersionMetric(options.Identifier, options.InformerMetricsProvider)),
		clock:                realClock,
		mutationDetector:     cache.NewCacheMutationDetector(description),
		resyncCheckPeriod:    options.ResyncPeriod,
		defaultHandlerResync: options.ResyncPeriod,
		processor:            newProcessor(realClock),
		synced:               make(chan struct{}),
	}
}

// sharedIndexInformer is a cache.SharedIndexInformer keyed by KeyFunc.
type sharedIndexInformer struct {
	lw               cache.ListerWatcher
	objectType       runtime.Object
	description      string
	identifier       cache.InformerNameAndResource
	metricsProvider  cache.InformerMetricsProvider
	indexer          cache.Indexer
	clock            clock.Clock
	mutationDetector cache.MutationDetector
	processor        *processor

	// synced is closed when the initial list has been stored and
	// distributed.
	synced chan struct{}

	// mu guards the fields below.
	mu                   sync.Mutex
	started, stopped     bool
	controller           cache.Controller
	transform            cache.TransformFunc
	watchErrorHandler    cache.WatchErrorHandlerWithContext
	resyncCheckPeriod    time.Duration
	defaultHandlerResync time.Duration

	// blockDeltas is held while deltas are applied and distributed, and
	// while a handler joins a running informer, so that a joining handler
	// sees every object exactly once.
	blockDeltas sync.Mutex

	// processed is the newest resourceVersion of an object applied to the
	// store, parsed as a number (0 when none parses).
	processed atomic.Uint64
}

// ProcessedResourceVersion returns the newest resourceVersion of any object
// applied to the store so far. Unlike LastSyncResourceVersion, which moves
// when the reflector receives an event, the store is guaranteed to reflect
// every write up to it (for stores whose resourceVersions are etcd
// revisions, as the shard's are); "" before the first object.
func (s *sharedIndexInformer) ProcessedResourceVersion() string {
	if v := s.processed.Load(); v > 0 {
		return strconv.FormatUint(v, 10)
	}
	return ""
}

// noteProcessed raises processed to obj's resourceVersion.
func (s *sharedIndexInformer) noteProcessed(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	for {
		cur := s.processed.Load()
		if rv <= cur || s.processed.CompareAndSwap(cur, rv) {
			return
		}
	}
}

var _ cache.SharedIndexInformer = &sharedIndexInformer{}

// Run implements cache.SharedInformer.
func (s *sharedIndexInformer) Run(stopCh <-chan struct{}) {
	s.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext implements cache.SharedInformer. It blocks until ctx is done
// and every handler has stopped.
func (s *sharedIndexInformer) RunWithContext(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)

	s.mu.Lock()
	if s.started || s.stopped {
		s.mu.Unlock()
		logger.Info("Warning: the shared informer has already run; it cannot run again", "type", s.description)
		return
	}
	fifo := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		Logger:          &logger,
		Name:            "RealFIFO " + s.description,
		KeyFunction:     KeyFunc,
		KnownObjects:    s.indexer,
		Transformer:     s.transform,
		Identifier:      s.identifier,
		MetricsProvider: s.metricsProvider,
	})
	s.controller = cache.New(&cache.Config{
		Queue:                        fifo,
		ListerWatcher:                s.lw,
		ObjectType:                   s.objectType,
		ObjectDescription:            s.description,
		FullResyncPeriod:             s.resyncCheckPeriod,
		ShouldResync:                 s.processor.shouldResync,
		WatchErrorHandlerWithContext: s.watchErrorHandler,
		Process: func(obj any, isInInitialList bool) error {
			// The controller drops errors of Process, so they are logged
			// here.
			if err := s.handleDeltas(obj, isInInitialList); err != nil {
				utilruntime.HandleErrorWithLogger(logger, err, "Failed to process deltas", "type", s.description)
			}
			return nil
		},
	})
	s.started = true
	// Handlers run from here on; the controller only distributes to them
	// once it pops deltas, after this.
	s.processor.start(s.synced)
	s.mu.Unlock()

	var wg sync.WaitGroup
	// The mutation detector and the handlers stop strictly after the
	// controller, which may still be distributing until it returns.
	stopAfter := make(chan struct{})
	wg.Go(func() { s.mutationDetector.Run(stopAfter) })
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-s.controller.HasSyncedChecker().Done():
			close(s.synced)
		}
	})

	s.controller.RunWithContext(ctx)

	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	close(stopAfter)
	s.processor.stop()
	wg.Wait()
}

// handleDeltas applies deltas popped from the FIFO to the indexer and
// distributes them. The FIFO is not atomic, so only per-object delta types
// occur.
func (s *sharedIndexInformer) handleDeltas(obj any, isInInitialList bool) error {
	deltas, ok := obj.(cache.Deltas)
	if !ok {
		return fmt.Errorf("expected cache.Deltas, got %T", obj)
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	for _, d := range deltas {
		switch d.Type {
		case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
			old, exists, err := s.indexer.Get(d.Object)
			if err == nil && exists {
				if err := s.indexer.Update(d.Object); err != nil {
					return fmt.Errorf("updating store: %w", err)
				}
				s.mutationDetector.AddObject(d.Object)
				s.processor.distribute(updateNotification{oldObj: old, newObj: d.Object}, isResync(old, d.Object))
				continue
			}
			if err := s.indexer.Add(d.Object); err != nil {
				return fmt.Errorf("adding to store: %w", err)
			}
			s.mutationDetector.AddObject(d.Object)
			s.processor.distribute(addNotification{newObj: d.Object, isInInitialList: isInInitialList}, false)
		case cache.Deleted:
			if err := s.indexer.Delete(d.Object); err != nil {
				return fmt.Errorf("deleting from store: %w", err)
			}
			s.processor.distribute(deleteNotification{oldObj: d.Object}, false)
		default:
			return fmt.Errorf("unexpected delta type %q", d.Type)
		}
	}
	for _, d := range deltas {
		obj := d.Object
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		s.noteProcessed(obj)
	}
	return nil
}

// isResync tells whether an update leaves the resourceVersion unchanged,
// which makes it a resync that only handlers due for resync receive.
func isResync(oldObj, newObj any) bool {
	o, err := meta.Accessor(oldObj)
	if err != nil {
		return false
	}
	n, err := meta.Accessor(newObj)
	if err != nil {
		return false
	}
	return o.GetResourceVersion() == n.GetResourceVersion()
}

// AddEventHandler implements cache.SharedInformer.
func (s *sharedIndexInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, cache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod implements cache.SharedInformer.
func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, cache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions implements cache.SharedInformer. A handler
// added to a running informer first receives an add notification, with
// isInInitialList set, for every object in the store.
func (s *sharedIndexInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("handler %v was not added to the shared informer of %s because it has stopped", handler, s.description)
	}

	logger := ptr.Deref(options.Logger, klog.Background())
	resyncPeriod := ptr.Deref(options.ResyncPeriod, s.defaultHandlerResync)
	if resyncPeriod > 0 {
		resyncPeriod = max(resyncPeriod, minimumResyncPeriod)
		if resyncPeriod < s.resyncCheckPeriod {
			if s.started {
				resyncPeriod = s.resyncCheckPeriod
			} else {
				s.resyncCheckPeriod = resyncPeriod
				s.processor.resyncCheckPeriodChanged(resyncPeriod)
			}
		}
	}
	l := newListener(logger, handler, resyncPeriod, effectiveResyncPeriod(resyncPeriod, s.resyncCheckPeriod), s.clock.Now())

	if !s.started {
		s.processor.add(l)
		return l, nil
	}

	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	running := s.processor.add(l)
	for _, obj := range s.indexer.List() {
		l.add(addNotification{newObj: obj, isInInitialList: true})
	}
	// Only now, with the initial notifications counted, may the handler
	// learn that the informer has synced.
	if running {
		l.watchUpstreamSynced(s.synced)
	}
	return l, nil
}

// effectiveResyncPeriod is the period a handler asking for desired gets
// from an informer that checks for resyncs every check.
func effectiveResyncPeriod(desired, check time.Duration) time.Duration {
	if desired == 0 || check == 0 {
		return 0
	}
	return max(desired, check)
}

// RemoveEventHandler implements cache.SharedInformer. Notifications still
// buffered for the handler are dropped.
func (s *sharedIndexInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	return s.processor.remove(handle)
}

// GetStore implements cache.SharedInformer.
func (s *sharedIndexInformer) GetStore() cache.Store { return s.indexer }

// GetIndexer implements cache.SharedIndexInformer.
func (s *sharedIndexInformer) GetIndexer() cache.Indexer { return s.indexer }

// AddIndexers implements cache.SharedIndexInformer.
func (s *sharedIndexInformer) AddIndexers(indexers cache.Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("indexers were not added because the informer has stopped")
	}
	if err := s.indexer.AddIndexers(indexers); err != nil {
		return fmt.Errorf("adding indexers to the informer of %s: %w", s.description, err)
	}
	return nil
}

// GetController implements cache.SharedInformer. The controller it returns
// only reports; it cannot run the informer a second time.
func (s *sharedIndexInformer) GetController() cache.Controller { return controllerView{s: s} }

// HasSynced implements cache.SharedInformer.
func (s *sharedIndexInformer) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker implements cache.SharedInformer.
func (s *sharedIndexInformer) HasSyncedChecker() cache.DoneChecker {
	return doneChecker{name: "SharedIndexInformer " + s.description, done: s.synced}
}

// LastSyncResourceVersion implements cache.SharedInformer. Across logical
// clusters it is only meaningful to the shard that produced it.
func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.controller == nil {
		return ""
	}
	return s.controller.LastSyncResourceVersion()
}

// SetWatchErrorHandler implements cache.SharedInformer.
func (s *sharedIndexInformer) SetWatchErrorHandler(handler cache.WatchErrorHandler) error {
	return s.SetWatchErrorHandlerWithContext(func(_ context.Context, r *cache.Reflector, err error) {
		handler(r, err)
	})
}

// SetWatchErrorHandlerWithContext implements cache.SharedInformer.
func (s *sharedIndexInformer) SetWatchErrorHandlerWithContext(handler cache.WatchErrorHandlerWithContext) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("informer has already started")
	}
	s.watchErrorHandler = handler
	return nil
}

// SetTransform implements cache.SharedInformer.
func (s *sharedIndexInformer) SetTransform(handler cache.TransformFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("informer has already started")
	}
	s.transform = handler
	return nil
}

// IsStopped implements cache.SharedInformer.
func (s *sharedIndexInformer) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// doneChecker is a named cache.DoneChecker over a channel.
type doneChecker struct {
	name string
	done <-chan struct{}
}

func (d doneChecker) Name() string          { return d.name }
func (d doneChecker) Done() <-chan struct{} { return d.done }

// controllerView is what GetController returns: it reports the informer's
// state and ignores Run, as client-go's shared informer does.
type controllerView struct {
	s *sharedIndexInformer
}

func (controllerView) Run(<-chan struct{})                   {}
func (controllerView) RunWithContext(context.Context)        {}
func (c controllerView) HasSynced() bool                     { return c.s.HasSynced() }
func (c controllerView) HasSyncedChecker() cache.DoneChecker { return c.s.HasSyncedChecker() }
func (c controllerView) LastSyncResourceVersion() string     { return c.s.LastSyncResourceVersion() }

// storeResourceVersionMetric is the store metric client-go's indexer keeps
// for an informer with a reserved identifier and a metrics provider.
func storeResourceVersionMetric(id cache.InformerNameAndResource, provider cache.InformerMetricsProvider) cache.GaugeMetric {
	if provider == nil || !id.Reserved() {
		return nil
	}
	return provider.NewStoreResourceVersionMetric(id)
}
