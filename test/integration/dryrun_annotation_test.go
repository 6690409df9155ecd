package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestDryRunAnswersWithTheRealCluster: a dry-run write never reaches
// storage, which stamps kcp.io/cluster; the answer must still name the
// cluster written to, not what the client claimed.
func TestDryRunAnswersWithTheRealCluster(t *testing.T) {
	s := framework.StartShard(t)
	a := logicalcluster.Name("dry-a")
	createCluster(t, s, a)
	mustCreateWidgetCRD(t, s, a)
	ctx := t.Context()
	lie := map[string]string{"kcp.io/cluster": "victim"}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	cms := kube(t, s, a).CoreV1().ConfigMaps("default")

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry", Annotations: lie}}, dry)
	if err != nil {
		t.Fatal(err)
	}
	if got := created.Annotations["kcp.io/cluster"]; got != string(a) {
		t.Errorf("dry-run create answered kcp.io/cluster %q, want %q", got, a)
	}

	real, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "real"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	real.Annotations = lie
	updated, err := cms.Update(ctx, real, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if got := updated.Annotations["kcp.io/cluster"]; got != string(a) {
		t.Errorf("dry-run update answered kcp.io/cluster %q, want %q", got, a)
	}

	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "dry", "annotations": map[string]any{"kcp.io/cluster": "victim"}},
	}}
	got, err := lifecycleDynamicClient(t, s, a).Resource(widgetsGVR).Namespace("default").Create(ctx, w, dry)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.GetAnnotations()["kcp.io/cluster"]; c != string(a) {
		t.Errorf("dry-run create of a custom resource answered kcp.io/cluster %q, want %q", c, a)
	}
}
