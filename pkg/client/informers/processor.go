package informers

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// processor fans notifications out to the listeners of one informer.
type processor struct {
	clock clock.Clock

	mu sync.RWMutex
	// listeners maps each listener to whether it receives the resync
	// notifications of the current resync round.
	listeners map[*listener]bool
	running   bool
}

func newProcessor(c clock.Clock) *processor {
	return &processor{clock: c, listeners: map[*listener]bool{}}
}

// add registers l, starting it if the processor runs, and tells whether it
// does. The caller of a running processor must call l.watchUpstreamSynced
// once l has its initial notifications.
func (p *processor) add(l *listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listeners[l] = true
	if p.running {
		l.start()
	}
	return p.running
}

// remove unregisters and stops the listener behind handle.
func (p *processor) remove(handle any) error {
	l, ok := handle.(*listener)
	if !ok {
		return fmt.Errorf("invalid event handler registration of type %T", handle)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.listeners[l]; !ok {
		return nil
	}
	delete(p.listeners, l)
	l.close()
	return nil
}

// start starts the listeners registered so far; synced is closed once the
// informer has synced.
func (p *processor) start(synced <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = true
	for l := range p.listeners {
		l.start()
		l.watchUpstreamSynced(synced)
	}
}

// stop stops every listener and waits for their handlers to return. Stopped
// listeners cannot be reused, so they are forgotten.
func (p *processor) stop() {
	p.mu.Lock()
	listeners := p.listeners
	p.listeners = map[*listener]bool{}
	p.running = false
	p.mu.Unlock()
	for l := range listeners {
		l.close()
	}
	for l := range listeners {
		<-l.done
	}
}

// distribute hands n to every listener, or for a resync notification only
// to the listeners due for resync.
func (p *processor) distribute(n notification, resync bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for l, resyncing := range p.listeners {
		if !resync || resyncing {
			l.add(n)
		}
	}
}

// shouldResync marks the listeners due for resync and tells whether there is
// any. The reflector calls it every resync check period.
func (p *processor) shouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	needed := false
	for l := range p.listeners {
		due := l.resyncPeriod != 0 && !now.Before(l.nextResync)
		p.listeners[l] = due
		if due {
			needed = true
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	return needed
}

// resyncCheckPeriodChanged adjusts the listeners' periods to a new check
// period, before the informer starts.
func (p *processor) resyncCheckPeriodChanged(check time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.listeners {
		l.resyncPeriod = effectiveResyncPeriod(l.requestedResyncPeriod, check)
	}
}
