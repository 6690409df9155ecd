package integration

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/cli/checkcmd"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestCheck runs `tessera check` (the chart's helm test) against a shard: it
// creates a workspace, uses it and deletes it; against a parent that does
// not exist it fails.
func TestCheck(t *testing.T) {
	s := framework.StartShard(t)
	var out bytes.Buffer
	o := &checkcmd.Options{Kubeconfig: s.Kubeconfig, Context: "root", Parent: "root", Timeout: time.Minute, Out: &out}
	if err := o.Run(t.Context()); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	for _, want := range []string{"is Ready after", "created and read back ConfigMap", "deleted workspace root:check-"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the check did not say %q:\n%s", want, out.String())
		}
	}
	list, err := kcpClient(t, s, logicalcluster.Root).Workspaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range list.Items {
		if strings.HasPrefix(ws.Name, "check-") && ws.DeletionTimestamp == nil {
			t.Errorf("the check left workspace %s", ws.Name)
		}
	}

	out.Reset()
	o = &checkcmd.Options{Kubeconfig: s.Kubeconfig, Context: "root", Parent: "root:nowhere", Timeout: 10 * time.Second, Out: &out}
	if err := o.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "creating workspace root:nowhere:check-") {
		t.Errorf("a check under a missing parent did not fail on creation: %v", err)
	}
}
