package integration

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestOrphanedLogicalClustersAreDeleted creates logical clusters owned by
// Workspaces that do not exist (in a parent cluster that exists, and in
// one that does not), as a Workspace admitted while its parent is being
// deleted leaves behind, and checks that the shard deletes them, while a
// logical cluster whose Workspace exists stays.
func TestOrphanedLogicalClustersAreDeleted(t *testing.T) {
	s := framework.StartShard(t)
	parent := logicalcluster.Root
	ctx := t.Context()

	owned := func(name logicalcluster.Name, ownerCluster, ownerName, uid string) {
		t.Helper()
		lc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
			"metadata": map[string]any{"name": "cluster"},
			"spec": map[string]any{"owner": map[string]any{
				"apiVersion": "tenancy.kcp.io/v1alpha1", "resource": "workspaces", "name": ownerName, "cluster": ownerCluster, "uid": uid,
			}},
		}}
		if _, err := dynamicFor(t, s, name).Resource(logicalClusterGVR).Create(ctx, lc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating logical cluster %s: %v", name, err)
		}
	}
	// A workspace that really exists, with its own logical cluster.
	ws := createWorkspace(t, s, parent, "real", nil)
	kept := logicalcluster.Name(ws.Spec.Cluster)

	owned("orphan-no-workspace", string(parent), "ghost", "uid-ghost")
	owned("orphan-no-parent", "orphans-gone-parent", "ghost", "uid-ghost")
	owned("orphan-other-uid", string(parent), "real", "uid-of-an-earlier-real")

	for _, c := range []logicalcluster.Name{"orphan-no-workspace", "orphan-no-parent", "orphan-other-uid"} {
		eventually(t, time.Minute, "orphaned logical cluster "+string(c)+" to be deleted", func(ctx context.Context) (bool, error) {
			_, err := dynamicFor(t, s, logicalcluster.Name(c)).Resource(logicalClusterGVR).Get(ctx, "cluster", metav1.GetOptions{})
			return err != nil, nil
		})
	}
	if _, err := dynamicFor(t, s, kept).Resource(logicalClusterGVR).Get(ctx, "cluster", metav1.GetOptions{}); err != nil {
		t.Errorf("the logical cluster of an existing workspace: %v", err)
	}
}
