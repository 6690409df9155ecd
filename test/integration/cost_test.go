package integration

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestNothingStartedPerLogicalCluster creates many logical clusters, uses
// each of them, and checks that the shard's goroutines do not grow with
// their number: controllers, informers and watch caches are per shard.
func TestNothingStartedPerLogicalCluster(t *testing.T) {
	s := framework.StartShard(t)
	use := func(from, to int) {
		for i := from; i < to; i++ {
			name := logicalcluster.Name(fmt.Sprintf("cost-%03d", i))
			createCluster(t, s, name)
			if _, err := s.Kubectl(name, "get", "configmaps", "-A"); err != nil {
				t.Fatal(err)
			}
		}
	}
	settled := func() int {
		var n int
		eventually(t, 30*time.Second, "goroutines to settle", func(ctx context.Context) (bool, error) {
			before := runtime.NumGoroutine()
			time.Sleep(time.Second)
			n = runtime.NumGoroutine()
			return n <= before, nil
		})
		return n
	}
	use(0, 10)
	base := settled()
	use(10, 110)
	after := settled()
	t.Logf("goroutines: %d after 10 logical clusters, %d after 110", base, after)
	if grown := after - base; grown > 25 {
		t.Errorf("goroutines grew by %d for 100 more logical clusters: something is started per cluster", grown)
	}
}

// TestNothingStartedPerWorkspace is TestNothingStartedPerLogicalCluster for
// workspaces: scheduling, initializers and the clients to shards must not
// leave anything running per workspace.
func TestNothingStartedPerWorkspace(t *testing.T) {
	s := framework.StartShard(t)
	create := func(from, to int) {
		for i := from; i < to; i++ {
			name := fmt.Sprintf("cost-%03d", i)
			createWorkspace(t, s, "root", name, nil)
			if _, err := s.Kubectl(logicalcluster.Name("root:"+name), "get", "configmaps", "-A"); err != nil {
				t.Fatal(err)
			}
		}
	}
	settled := func() int {
		var n int
		eventually(t, 30*time.Second, "goroutines to settle", func(ctx context.Context) (bool, error) {
			before := runtime.NumGoroutine()
			time.Sleep(time.Second)
			n = runtime.NumGoroutine()
			return n <= before, nil
		})
		return n
	}
	create(0, 5)
	base := settled()
	create(5, 55)
	after := settled()
	t.Logf("goroutines: %d after 5 workspaces, %d after 55", base, after)
	if grown := after - base; grown > 25 {
		t.Errorf("goroutines grew by %d for 50 more workspaces: something is started per workspace", grown)
	}
}
