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
