package naming

import (
	"testing"
	"time"
)

func TestGroupLocks(t *testing.T) {
	var g groupLocks
	widgets := groupKey{cluster: "a", group: "example.com"}
	unlock := g.lock(widgets)

	// Another group, or the same group in another cluster, does not wait.
	g.lock(groupKey{cluster: "a", group: "other.io"})()
	g.lock(groupKey{cluster: "b", group: "example.com"})()

	acquired := make(chan struct{})
	go func() {
		defer close(acquired)
		g.lock(widgets)()
	}()
	select {
	case <-acquired:
		t.Fatal("the same group was locked twice")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	<-acquired
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.locks) != 0 {
		t.Errorf("%d locks left after all were released", len(g.locks))
	}
}
