package naming

import (
	"sync"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// groupKey names the scope in which CRD names must be unique.
type groupKey struct {
	cluster logicalcluster.Name
	group   string
}

// groupLocks serialises the reconciles of the CRDs of one group in one
// logical cluster. It holds an entry only while a reconcile of that group
// runs or waits, so it stays as small as the number of workers.
type groupLocks struct {
	mu    sync.Mutex
	locks map[groupKey]*groupLock
}

type groupLock struct {
	mu   sync.Mutex
	refs int
}

// lock locks the group of key and returns the function that unlocks it.
func (g *groupLocks) lock(key groupKey) (unlock func()) {
	g.mu.Lock()
	if g.locks == nil {
		g.locks = map[groupKey]*groupLock{}
	}
	l, ok := g.locks[key]
	if !ok {
		l = &groupLock{}
		g.locks[key] = l
	}
	l.refs++
	g.mu.Unlock()

	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		g.mu.Lock()
		defer g.mu.Unlock()
		l.refs--
		if l.refs == 0 {
			delete(g.locks, key)
		}
	}
}
