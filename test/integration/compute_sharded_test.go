package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/syncer"
	syncerOptions "github.com/tessera-dev/tessera/syncer/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
	vwoptions "github.com/tessera-dev/tessera/virtual/options"
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
	applyEventually(t, shard1, app, euPlacement)
	first := waitPlacementBound(t, shard1, app)
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

// TestSyncerAcrossShards: one syncer serves the workspaces of every shard
// of an installation. Its SyncTarget is in root:compute on the root shard;
// user workspaces on root and on shard-1 bind root:compute's export, and
// their Deployments go down into the physical cluster through the syncer
// virtual workspace of their own shard, with the SyncTarget's credentials,
// which only root can check; status comes back to each, a volume made for
// the claim of the workspace on shard-1 goes up to shard-1, and deletions
// on shard-1 finish there.
func TestSyncerAcrossShards(t *testing.T) {
	caCert, caKey := framework.NewInstallationCA(t)
	root := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey),
		func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} })
	shard1 := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey), framework.JoiningRoot(root, "shard-1"))
	eventually(t, time.Minute, "shard-1 registered", func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, root, logicalcluster.Root).Shards().Get(ctx, "shard-1", metav1.GetOptions{})
		return err == nil, nil
	})
	compute, _ := waitComputeBattery(t, root)
	phys := logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "phys", "root").Spec.Cluster)
	createBinding(t, root, phys, "kubernetes", "root:compute", "kubernetes")
	bindRoot(t, root, compute, "workload.kcp.io", "scheduling.kcp.io")
	waitBound(t, root, phys, "kubernetes")
	// The syncer's credentials are a service account token of
	// root:compute, which root signed and only root can check.
	for _, sa := range []string{"kind-syncer", "nobody"} {
		root.MustKubectl(t, compute, "create", "serviceaccount", sa, "-n", "default")
		waitForServiceAccount(t, root, compute, "default", sa)
	}
	token := createToken(t, root, compute, "kind-syncer", "-n", "default", "--duration=1h")
	uid := createSyncTarget(t, root, compute, "kind", "system:serviceaccount:default:kind-syncer")
	key := workloadv1alpha1.ToSyncTargetKey(compute.String(), "kind")
	o := syncerOptions.NewOptions()
	o.FromKubeconfig = writeKubeconfig(t, root, "from.kubeconfig", root.URL+"/clusters/root:compute", token)
	o.ToKubeconfig = writeKubeconfig(t, root, "to.kubeconfig", root.URL+"/clusters/"+phys.String(), "")
	o.SyncTargetName, o.SyncTargetUID, o.FromCluster = "kind", uid, compute.String()
	startSyncer(t, o)
	eventually(t, 60*time.Second, "SyncTarget kind Ready, with the virtual workspaces of both shards", func(ctx context.Context) (bool, error) {
		out, err := root.Kubectl(compute, "get", "synctarget", "kind", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.virtualWorkspaces[*].syncerURL}`)
		return err == nil && strings.HasPrefix(out, "True ") && strings.Contains(out, shard1.URL), fmt.Errorf("%s", out)
	})

	down := dynamicClient(t, root, phys)
	type userWorkspace struct {
		shard   *framework.Shard
		cluster logicalcluster.Name
		downNS  string
	}
	users := map[string]*userWorkspace{"root": {shard: root}, "shard-1": {shard: shard1}}
	for shardName, u := range users {
		u.cluster = logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "app-"+shardName, shardName).Spec.Cluster)
		createBinding(t, u.shard, u.cluster, "scheduling.kcp.io", "root", "scheduling.kcp.io")
		createBinding(t, u.shard, u.cluster, "kubernetes", "root:compute", "kubernetes")
		waitBound(t, u.shard, u.cluster, "kubernetes")
		u.shard.MustKubectl(t, u.cluster, "create", "namespace", "web")
		eventually(t, 60*time.Second, "namespace web of the workspace on "+shardName+" scheduled to kind", func(ctx context.Context) (bool, error) {
			ns, err := kube(t, u.shard, u.cluster).CoreV1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
			return err == nil && ns.Labels["state.workload.kcp.io/"+key] == "Sync", err
		})
		eventually(t, 30*time.Second, "kubectl create deployment on "+shardName, func(ctx context.Context) (bool, error) {
			_, err := u.shard.Kubectl(u.cluster, "create", "deployment", "kuard", "-n", "web", "--image=gcr.io/kuar-demo/kuard-amd64:blue")
			return err == nil, nil
		})
		u.downNS = syncer.DownstreamNamespace(syncer.NamespaceLocator{
			SyncTarget: syncer.SyncTargetLocator{Cluster: compute.String(), Name: "kind", UID: types.UID(uid)},
			Cluster:    u.cluster.String(),
			Namespace:  "web",
		})
	}
	for shardName, u := range users {
		eventually(t, 30*time.Second, "the Deployment of the workspace on "+shardName+" downstream", func(ctx context.Context) (bool, error) {
			d, err := down.Resource(deploymentsGVR).Namespace(u.downNS).Get(ctx, "kuard", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			d.Object["status"] = map[string]any{"observedGeneration": d.GetGeneration(), "replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(1)}
			_, err = down.Resource(deploymentsGVR).Namespace(u.downNS).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err == nil, nil
		})
		eventually(t, 30*time.Second, "kubectl get deployments on "+shardName+": READY 1/1", func(ctx context.Context) (bool, error) {
			out, err := u.shard.Kubectl(u.cluster, "get", "deployments", "-n", "web", "kuard", "--no-headers")
			f := strings.Fields(out)
			return err == nil && len(f) > 1 && f[1] == "1/1", fmt.Errorf("%s", out)
		})
	}

	// Shard-1's syncer virtual workspace, in the shard and in a
	// tessera-virtual-workspaces of shard-1, lets the SyncTarget's service
	// account in, and nobody else.
	vw := startVirtualWorkspaces(t, shard1, func(o *vwoptions.Options) {
		o.Kubeconfig = shard1.Kubeconfig
		o.CacheKubeconfig = root.Kubeconfig
		o.ShardName = "shard-1"
		o.ClientCAFile = caCert
	})
	admin := shard1.Config("")
	nobody := createToken(t, root, compute, "nobody", "-n", "default", "--duration=1h")
	for where, base := range map[string]struct {
		url string
		tls rest.TLSClientConfig
	}{
		"shard-1":                              {shard1.URL, rest.TLSClientConfig{CAFile: admin.CAFile, CAData: admin.CAData}},
		"shard-1's tessera-virtual-workspaces": {vw.URL, rest.TLSClientConfig{CAFile: vw.CAFile}},
	} {
		eventually(t, 30*time.Second, "the Deployment of shard-1 listed by the syncer at "+where, func(ctx context.Context) (bool, error) {
			list, err := syncerVWAt(t, base.url, base.tls, compute, "kind", uid, "*", token).Resource(deploymentsGVR).List(ctx, metav1.ListOptions{})
			return err == nil && len(list.Items) == 1 && logicalcluster.From(&list.Items[0]) == users["shard-1"].cluster, err
		})
		for who, tok := range map[string]string{"a wrong token": "not-a-token", "another service account": nobody} {
			_, err := syncerVWAt(t, base.url, base.tls, compute, "kind", uid, "*", tok).Resource(deploymentsGVR).List(t.Context(), metav1.ListOptions{})
			if want := map[string]bool{"a wrong token": apierrors.IsUnauthorized(err), "another service account": apierrors.IsForbidden(err)}[who]; !want {
				t.Errorf("%s at %s: %v", who, where, err)
			}
		}
		if _, err := syncerVWAt(t, base.url, base.tls, compute, "kind", "wrong-uid", "*", token).Resource(deploymentsGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("another UID at %s: %v", where, err)
		}
	}

	// A volume for the claim of the workspace on shard-1 goes up there.
	u := users["shard-1"]
	u.shard.MustKubectl(t, u.cluster, "apply", "-n", "web", "-f", yamlFile(t, "pvc.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n"))
	eventually(t, 30*time.Second, "the claim downstream", func(ctx context.Context) (bool, error) {
		_, err := down.Resource(pvcsGVR).Namespace(u.downNS).Get(ctx, "data", metav1.GetOptions{})
		return err == nil, nil
	})
	pv := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
		"metadata": map[string]any{"name": "pvc-data"},
		"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "hostPath": map[string]any{"path": "/data"},
			"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "namespace": u.downNS, "name": "data"}}}}
	if _, err := down.Resource(pvsGVR).Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Once bound there, shard-1's volume coordination switches it to Sync,
	// and the syncer takes it over through shard-1's syncer virtual
	// workspace.
	eventually(t, 30*time.Second, "the volume upsynced to the workspace on shard-1, then synced", func(ctx context.Context) (bool, error) {
		got, err := dynamicClient(t, shard1, u.cluster).Resource(pvsGVR).Get(ctx, "pvc-data", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ns, _, _ := unstructured.NestedString(got.Object, "spec", "claimRef", "namespace")
		return ns == "web" && got.GetLabels()["state.workload.kcp.io/"+key] == "Sync" && got.GetAnnotations()[workloadv1alpha1.VolumeProvisionedByAnnotationKey] == key &&
			slices.Contains(got.GetFinalizers(), "workload.kcp.io/syncer-"+key), fmt.Errorf("%v", got.Object)
	})
	eventually(t, 30*time.Second, "the volume downstream taken over by the syncer", func(ctx context.Context) (bool, error) {
		got, err := down.Resource(pvsGVR).Get(ctx, "pvc-data", metav1.GetOptions{})
		return err == nil && got.GetLabels()[workloadv1alpha1.InternalDownstreamClusterLabel] == key, err
	})
	u.shard.MustKubectl(t, u.cluster, "delete", "pvc", "data", "-n", "web", "--wait=false")

	// Deletion on shard-1: the copy goes, then the finalizer, then the
	// object.
	u.shard.MustKubectl(t, u.cluster, "delete", "deployment", "kuard", "-n", "web", "--wait=false")
	eventually(t, 30*time.Second, "the Deployment of shard-1 deleted upstream and downstream", func(ctx context.Context) (bool, error) {
		_, upErr := dynamicClient(t, shard1, u.cluster).Resource(deploymentsGVR).Namespace("web").Get(ctx, "kuard", metav1.GetOptions{})
		_, downErr := down.Resource(deploymentsGVR).Namespace(u.downNS).Get(ctx, "kuard", metav1.GetOptions{})
		return apierrors.IsNotFound(upErr) && apierrors.IsNotFound(downErr), nil
	})
	if _, err := down.Resource(deploymentsGVR).Namespace(users["root"].downNS).Get(t.Context(), "kuard", metav1.GetOptions{}); err != nil {
		t.Errorf("the Deployment of the workspace on root downstream after shard-1's was deleted: %v", err)
	}
}
