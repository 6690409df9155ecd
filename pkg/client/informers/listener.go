package informers

import (
	"fmt"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/cache/synctrack"
	"k8s.io/klog/v2"
	"k8s.io/utils/buffer"
)

// notification is one of addNotification, updateNotification and
// deleteNotification.
type notification any

type addNotification struct {
	newObj          any
	isInInitialList bool
}

type updateNotification struct {
	oldObj, newObj any
}

type deleteNotification struct {
	oldObj any
}

// listener delivers notifications to one handler, in order, from an
// unbounded buffer, so that a slow handler never blocks the informer or
// other handlers. It is the cache.ResourceEventHandlerRegistration of its
// handler.
type listener struct {
	logger  klog.Logger
	handler cache.ResourceEventHandler
	tracker *synctrack.SingleFileTracker

	// Resync bookkeeping, guarded by the processor's lock.
	requestedResyncPeriod time.Duration
	resyncPeriod          time.Duration
	nextResync            time.Time

	mu      sync.Mutex
	cond    sync.Cond
	pending buffer.TypedRingGrowing[notification]
	started bool
	closed  bool
	// done is closed when the listener has stopped delivering.
	done chan struct{}
}

var _ cache.ResourceEventHandlerRegistration = &listener{}

func newListener(logger klog.Logger, handler cache.ResourceEventHandler, requested, period time.Duration, now time.Time) *listener {
	l := &listener{
		logger:                logger,
		handler:               handler,
		tracker:               synctrack.NewSingleFileTracker(fmt.Sprintf("event handler %T", handler)),
		requestedResyncPeriod: requested,
		resyncPeriod:          period,
		nextResync:            now.Add(period),
		done:                  make(chan struct{}),
	}
	l.cond.L = &l.mu
	return l
}

// add buffers n for delivery.
func (l *listener) add(n notification) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if a, ok := n.(addNotification); ok && a.isInInitialList {
		l.tracker.Start()
	}
	l.pending.WriteOne(n)
	l.cond.Signal()
}

// start starts delivering.
func (l *listener) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed {
		return
	}
	l.started = true
	go l.run()
}

// watchUpstreamSynced tells the tracker when the informer has synced. It is
// called once all initial notifications of the listener have been added.
func (l *listener) watchUpstreamSynced(synced <-chan struct{}) {
	go func() {
		select {
		case <-synced:
			l.tracker.UpstreamHasSynced()
		case <-l.done:
		}
	}()
}

// close stops delivering; buffered notifications are dropped.
func (l *listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.pending = buffer.TypedRingGrowing[notification]{}
	if !l.started {
		close(l.done)
	}
	l.cond.Broadcast()
}

func (l *listener) run() {
	defer close(l.done)
	defer utilruntime.HandleCrashWithLogger(l.logger)
	for {
		l.mu.Lock()
		for l.pending.Len() == 0 && !l.closed {
			l.cond.Wait()
		}
		if l.closed {
			l.mu.Unlock()
			return
		}
		n, _ := l.pending.ReadOne()
		l.mu.Unlock()
		l.deliver(n)
	}
}

func (l *listener) deliver(n notification) {
	switch n := n.(type) {
	case addNotification:
		l.handler.OnAdd(n.newObj, n.isInInitialList)
		if n.isInInitialList {
			l.tracker.Finished()
		}
	case updateNotification:
		l.handler.OnUpdate(n.oldObj, n.newObj)
	case deleteNotification:
		l.handler.OnDelete(n.oldObj)
	default:
		utilruntime.HandleErrorWithLogger(l.logger, nil, "Unexpected notification", "type", fmt.Sprintf("%T", n))
	}
}

// HasSynced tells whether the informer has synced and the handler has
// processed every notification of the initial list.
func (l *listener) HasSynced() bool { return l.tracker.HasSynced() }

// HasSyncedChecker is HasSynced as a cache.DoneChecker.
func (l *listener) HasSyncedChecker() cache.DoneChecker { return l.tracker }

// ShutdownChan is closed once the handler has returned for the last time
// after the registration was removed or the informer stopped; it makes
// cache.ShutDownEventHandler work with this informer.
func (l *listener) ShutdownChan() <-chan struct{} { return l.done }
