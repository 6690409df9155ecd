package integration

import (
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestKubectlAcrossAllClusters: a shard admin lists custom resources of
// every logical cluster with kubectl at /clusters/*, which needs them in
// discovery there (the resource of each CRD name), and sees each object's
// cluster in its kcp.io/cluster annotation.
func TestKubectlAcrossAllClusters(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("across-a"), logicalcluster.Name("across-b")
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
		mustCreateWidgetCRD(t, s, c)
		mustCreateWidget(t, lifecycleDynamicClient(t, s, c), "default", "w-"+string(c))
	}
	out := s.MustKubectl(t, "*", "api-resources", "--api-group", "example.com")
	if !strings.Contains(out, "widgets") || !strings.Contains(out, "Widget") {
		t.Errorf("kubectl api-resources across all clusters:\n%s", out)
	}
	out = s.MustKubectl(t, "*", "get", "widgets", "-A", "-o", `custom-columns=WORKSPACE:.metadata.annotations.kcp\.io/cluster,NAME:.metadata.name`, "--no-headers")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := map[string]bool{"across-a   w-across-a": true, "across-b   w-across-b": true}
	got := 0
	for _, l := range lines {
		if want[strings.Join(strings.Fields(l), "   ")] {
			got++
		}
	}
	if got != 2 {
		t.Errorf("kubectl get widgets -A across all clusters:\n%s", out)
	}
}
