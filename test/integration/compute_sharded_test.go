package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestComputeSchedulingAcrossShards: the compute workspace with its
// SyncTargets and Location is on the root shard, the user's workspace on
// shard-1. The SyncTargets and Locations reach shard-1 through the cache
// server, so the user's Placement there binds root:compute's Location and
// its namespace is scheduled to one SyncTarget; when that one stops
// sending heartbeats, root turns it not Ready, and shard-1 moves the
// namespace to the other.
func TestComputeSchedulingAcrossShards(t *testing.T) {
	caCert, caKey := framework.NewInstallationCA(t)
	threshold := func(o *options.Options) { o.SyncTargetHeartbeatThreshold = 2 * time.Second }
	root := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey), threshold)
	shard1 := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey), framework.JoiningRoot(root, "shard-1"), threshold)
	eventually(t, time.Minute, "shard-1 registered", func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, root, logicalcluster.Root).Shards().Get(ctx, "shard-1", metav1.GetOptions{})
		return err == nil, nil
	})
	waitComputeExports(t, root)
	compute := logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "compute", "root").Spec.Cluster)
	app := logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "app", "shard-1").Spec.Cluster)
	bindRoot(t, root, compute, "workload.kcp.io", "scheduling.kcp.io")
	createBinding(t, shard1, app, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	waitBound(t, shard1, app, "scheduling.kcp.io")

	applyEventually(t, root, compute, `apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: eu-1
  labels: {region: eu}
---
apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: eu-2
  labels: {region: eu}
---
apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: eu
  labels: {region: eu}
spec:
  resource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  instanceSelector:
    matchLabels: {region: eu}
`)
	beats := startHeartbeats(t, root, compute, "eu-1", "eu-2")
	keys := map[string]string{}
	for _, name := range []string{"eu-1", "eu-2"} {
		keys[name] = workloadv1alpha1.ToSyncTargetKey(compute.String(), name)
		eventually(t, 30*time.Second, "SyncTarget "+name+" Ready", func(ctx context.Context) (bool, error) {
			out, err := root.Kubectl(compute, "get", "synctarget", name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			return out == "True", err
		})
	}

	shard1.MustKubectl(t, app, "create", "namespace", "web")
	applyEventually(t, shard1, app, `apiVersion: scheduling.kcp.io/v1alpha1
kind: Placement
metadata:
  name: eu
spec:
  locationWorkspace: root:compute
  locationResource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  locationSelectors:
  - matchLabels: {region: eu}
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: web}
`)
	var first string
	eventually(t, 30*time.Second, "the Placement on shard-1 Bound to root:compute's eu with a SyncTarget", func(ctx context.Context) (bool, error) {
		p, err := dynamicClient(t, shard1, app).Resource(placementsGVR).Get(ctx, "eu", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		loc, _, _ := unstructured.NestedStringMap(p.Object, "status", "selectedLocation")
		first = p.GetAnnotations()["internal.workload.kcp.io/synctarget"]
		return phase == "Bound" && loc["path"] == "root:compute" && loc["locationName"] == "eu" && first != "", nil
	})
	nsState := func(ctx context.Context) (map[string]string, map[string]string, error) {
		ns, err := kube(t, shard1, app).CoreV1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return nil, nil, err
		}
		return ns.Labels, ns.Annotations, nil
	}
	eventually(t, 30*time.Second, "namespace web on shard-1 synced to the scheduled SyncTarget", func(ctx context.Context) (bool, error) {
		lbls, _, err := nsState(ctx)
		return err == nil && lbls["state.workload.kcp.io/"+first] == "Sync", err
	})

	var second string
	for name, key := range keys {
		if key != first {
			second = name
		}
	}
	firstName := map[string]string{keys["eu-1"]: "eu-1", keys["eu-2"]: "eu-2"}[first]
	movedTo := func(to, from, why string) {
		t.Helper()
		eventually(t, 60*time.Second, "namespace web moved to "+to+" "+why, func(ctx context.Context) (bool, error) {
			lbls, ann, err := nsState(ctx)
			return err == nil && lbls["state.workload.kcp.io/"+keys[to]] == "Sync" &&
				(lbls["state.workload.kcp.io/"+keys[from]] == "" || ann["deletion.internal.workload.kcp.io/"+keys[from]] != ""), err
		})
	}
	syncTargets := dynamicClient(t, root, compute).Resource(syncTargetsGVR)
	patch := func(name, body string) {
		t.Helper()
		if _, err := syncTargets.Patch(t.Context(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Drained on root (what kubectl kcp workload drain writes).
	patch(firstName, fmt.Sprintf(`{"spec":{"unschedulable":true,"evictAfter":%q}}`, time.Now().UTC().Format(time.RFC3339)))
	movedTo(second, firstName, "once "+firstName+" was drained")
	patch(firstName, `{"spec":{"unschedulable":false,"evictAfter":null}}`)
	// The second one loses its syncer: root turns it not Ready.
	beats.stop(second)
	movedTo(firstName, second, "once root found "+second+" not Ready")
}
