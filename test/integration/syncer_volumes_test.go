package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/syncer"
	syncerOptions "github.com/tessera-dev/tessera/syncer/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestSyncerMovesVolumes follows a volume through kcp's storage design
// with two SyncTargets, a and b, whose physical clusters are workspaces of
// the shard (the test plays their provisioner and volume controller):
//   - provisioned on a for a claim synced there, the volume comes up
//     (Upsync), and once the workspace's claim is bound to it, switches to
//     Sync for a, which is recorded as its provisioner; on a it keeps its
//     name and its claim's UID, and becomes Retain;
//   - the claim's namespace also placed on b: the pair is synced to b, the
//     volume under a name of b's, bound by name to b's claim, Retain;
//   - the namespace leaves a: a's copies go, the storage is retained
//     (the volume is Retain there before it is deleted), b keeps them;
//   - the claim deleted: b, the only holder, is named to release the
//     storage, its copy becomes Delete, the volume is deleted upstream and
//     stays until the physical cluster has released it.
func TestSyncerMovesVolumes(t *testing.T) {
	s := framework.StartShard(t,
		func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} },
		withTokens(t, "token-a,syncer-a,uid-a", "token-b,syncer-b,uid-b"))
	compute, _ := waitComputeBattery(t, s)
	bindRoot(t, s, compute, "workload.kcp.io", "scheduling.kcp.io")
	app := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "app", nil).Spec.Cluster)

	type site struct {
		name, uid, key string
		phys           logicalcluster.Name
		down           dynamic.Interface
	}
	sites := map[string]*site{}
	for _, name := range []string{"a", "b"} {
		st := &site{name: name}
		st.phys = logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "phys-"+name, nil).Spec.Cluster)
		createBinding(t, s, st.phys, "kubernetes", "root:compute", "kubernetes")
		waitBound(t, s, st.phys, "kubernetes")
		st.down = dynamicClient(t, s, st.phys)
		st.uid = createSyncTarget(t, s, compute, name, "syncer-"+name)
		st.key = workloadv1alpha1.ToSyncTargetKey(compute.String(), name)
		s.MustKubectl(t, compute, "label", "synctarget", name, "site="+name)
		applyEventually(t, s, compute, fmt.Sprintf(`apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: at-%[1]s
  labels: {site: %[1]s}
spec:
  resource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  instanceSelector:
    matchLabels: {site: %[1]s}
`, name))
		o := syncerOptions.NewOptions()
		o.FromKubeconfig = writeKubeconfig(t, s, "from-"+name+".kubeconfig", s.URL+"/clusters/root:compute", "token-"+name)
		o.ToKubeconfig = writeKubeconfig(t, s, "to-"+name+".kubeconfig", s.URL+"/clusters/"+st.phys.String(), "")
		o.SyncTargetName, o.SyncTargetUID, o.FromCluster = name, st.uid, compute.String()
		o.DownstreamNamespaceCleanDelay = time.Second
		startSyncer(t, o)
		sites[name] = st
	}
	for _, st := range sites {
		eventually(t, 60*time.Second, "SyncTarget "+st.name+" Ready", func(ctx context.Context) (bool, error) {
			out, err := s.Kubectl(compute, "get", "synctarget", st.name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			return err == nil && out == "True", fmt.Errorf("%s", out)
		})
	}
	a, b := sites["a"], sites["b"]

	// The workspace places its namespaces by hand: no default Placement.
	createBinding(t, s, app, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	binding := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Annotations: map[string]string{workloadv1alpha1.AnnotationSkipDefaultObjectCreation: "true"}},
		Spec:       apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: "root:compute", Name: "kubernetes"}}},
	}
	if _, err := kcpClient(t, s, app).APIBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, s, app, "kubernetes")
	waitBound(t, s, app, "scheduling.kcp.io")
	placement := func(name string) string {
		return fmt.Sprintf(`apiVersion: scheduling.kcp.io/v1alpha1
kind: Placement
metadata:
  name: on-%[1]s
spec:
  locationWorkspace: root:compute
  locationResource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  locationSelectors: [{matchLabels: {site: %[1]s}}]
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: web}
`, name)
	}
	s.MustKubectl(t, app, "create", "namespace", "web")
	applyEventually(t, s, app, placement("a"))
	eventually(t, 60*time.Second, "namespace web scheduled to a", func(ctx context.Context) (bool, error) {
		ns, err := kube(t, s, app).CoreV1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
		return err == nil && ns.Labels["state.workload.kcp.io/"+a.key] == "Sync", err
	})
	downNS := func(st *site) string {
		return syncer.DownstreamNamespace(syncer.NamespaceLocator{
			SyncTarget: syncer.SyncTargetLocator{Cluster: compute.String(), Name: st.name, UID: types.UID(st.uid)},
			Cluster:    app.String(), Namespace: "web",
		})
	}
	upPVs := dynamicClient(t, s, app).Resource(pvsGVR)
	upPVCs := dynamicClient(t, s, app).Resource(pvcsGVR).Namespace("web")
	get := func(ctx context.Context, c dynamic.ResourceInterface, name string) *unstructured.Unstructured {
		u, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return u
	}
	str := func(u *unstructured.Unstructured, fields ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, fields...)
		return v
	}

	// Provisioned on a.
	eventually(t, 30*time.Second, "kubectl apply the claim", func(ctx context.Context) (bool, error) {
		_, err := s.Kubectl(app, "apply", "-n", "web", "-f", yamlFile(t, "pvc.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteMany]\n  storageClassName: nfs\n  resources: {requests: {storage: 1Gi}}\n"))
		return err == nil, err
	})
	var claimA *unstructured.Unstructured
	eventually(t, 30*time.Second, "the claim on a", func(ctx context.Context) (bool, error) {
		claimA = get(ctx, a.down.Resource(pvcsGVR).Namespace(downNS(a)), "data")
		return claimA != nil, nil
	})
	pv := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
		"metadata": map[string]any{"name": "pvc-0001"},
		"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteMany"}, "storageClassName": "nfs",
			"persistentVolumeReclaimPolicy": "Delete", "nfs": map[string]any{"server": "nfs.example.com", "path": "/exports/0001"},
			"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "namespace": downNS(a), "name": "data", "uid": string(claimA.GetUID())}}}}
	created, err := a.down.Resource(pvsGVR).Create(t.Context(), pv, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"phase": "Bound"}
	if _, err := a.down.Resource(pvsGVR).UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the volume up, bound to the workspace's claim, switched to Sync for a", func(ctx context.Context) (bool, error) {
		up := get(ctx, upPVs, "pvc-0001")
		claim := get(ctx, upPVCs, "data")
		if up == nil || claim == nil {
			return false, nil
		}
		return str(claim, "spec", "volumeName") == "pvc-0001" && up.GetLabels()["state.workload.kcp.io/"+a.key] == "Sync" &&
			up.GetAnnotations()[workloadv1alpha1.VolumeProvisionedByAnnotationKey] == a.key &&
			slices.Contains(up.GetFinalizers(), "workload.kcp.io/syncer-"+a.key) &&
			str(up, "spec", "persistentVolumeReclaimPolicy") == "Delete" && str(up, "status", "phase") == "Bound", fmt.Errorf("%v", up.Object)
	})
	eventually(t, 30*time.Second, "a's volume synced down in place: same name, same claim UID, Retain", func(ctx context.Context) (bool, error) {
		d := get(ctx, a.down.Resource(pvsGVR), "pvc-0001")
		return d != nil && d.GetLabels()[workloadv1alpha1.InternalDownstreamClusterLabel] == a.key &&
			str(d, "spec", "persistentVolumeReclaimPolicy") == "Retain" && str(d, "spec", "claimRef", "uid") == string(claimA.GetUID()) &&
			str(d, "spec", "claimRef", "namespace") == downNS(a) && d.GetAnnotations()[syncer.VolumeUpstreamAnnotation] == app.String()+"|pvc-0001", fmt.Errorf("%v", d)
	})
	if l, err := a.down.Resource(pvsGVR).List(t.Context(), metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Fatalf("volumes on a: %v, %v", l, err)
	}

	// Shared: the namespace placed on b too.
	applyEventually(t, s, app, placement("b"))
	bName := syncer.DownstreamVolumeName(syncer.SyncTargetLocator{Cluster: compute.String(), Name: "b", UID: types.UID(b.uid)}, app.String(), "pvc-0001")
	eventually(t, 60*time.Second, "the pair synced to b, bound to each other by name, Retain", func(ctx context.Context) (bool, error) {
		d := get(ctx, b.down.Resource(pvsGVR), bName)
		claim := get(ctx, b.down.Resource(pvcsGVR).Namespace(downNS(b)), "data")
		if d == nil || claim == nil {
			return false, nil
		}
		return str(claim, "spec", "volumeName") == bName && str(d, "spec", "claimRef", "namespace") == downNS(b) && str(d, "spec", "claimRef", "name") == "data" &&
			str(d, "spec", "claimRef", "uid") == "" && str(d, "spec", "persistentVolumeReclaimPolicy") == "Retain" &&
			str(d, "spec", "nfs", "path") == "/exports/0001", fmt.Errorf("%v %v", d.Object, claim.Object)
	})
	if up := get(t.Context(), upPVs, "pvc-0001"); up == nil || up.GetLabels()["state.workload.kcp.io/"+a.key] != "Sync" || up.GetLabels()["state.workload.kcp.io/"+b.key] != "Sync" {
		t.Errorf("the shared volume upstream: %v", up)
	}

	// Moved: the namespace leaves a.
	s.MustKubectl(t, app, "delete", "placement", "on-a")
	eventually(t, 60*time.Second, "a's copies gone, b's kept", func(ctx context.Context) (bool, error) {
		up := get(ctx, upPVs, "pvc-0001")
		if up == nil || get(ctx, a.down.Resource(pvsGVR), "pvc-0001") != nil || get(ctx, a.down.Resource(pvcsGVR).Namespace(downNS(a)), "data") != nil {
			return false, nil
		}
		_, onA := up.GetLabels()["state.workload.kcp.io/"+a.key]
		return !onA && !slices.Contains(up.GetFinalizers(), "workload.kcp.io/syncer-"+a.key) && get(ctx, b.down.Resource(pvsGVR), bName) != nil, fmt.Errorf("%v", up.Object)
	})

	// Deleted: b releases the storage.
	claimB := get(t.Context(), b.down.Resource(pvcsGVR).Namespace(downNS(b)), "data")
	if claimB == nil {
		t.Fatal("b's claim is gone")
	}
	s.MustKubectl(t, app, "delete", "pvc", "data", "-n", "web", "--wait=false")
	eventually(t, 60*time.Second, "the claim gone; b named to release the volume, Delete there, the volume deleted upstream and held", func(ctx context.Context) (bool, error) {
		if get(ctx, upPVCs, "data") != nil || get(ctx, b.down.Resource(pvcsGVR).Namespace(downNS(b)), "data") != nil {
			return false, nil
		}
		up := get(ctx, upPVs, "pvc-0001")
		d := get(ctx, b.down.Resource(pvsGVR), bName)
		if up == nil || d == nil {
			return false, fmt.Errorf("upstream %v, on b %v", up, d)
		}
		return up.GetDeletionTimestamp() != nil && up.GetAnnotations()[workloadv1alpha1.VolumeReclaimByAnnotationKey] == b.key &&
			str(d, "spec", "persistentVolumeReclaimPolicy") == "Delete", fmt.Errorf("%v %v", up.Object, d.Object)
	})
	// The physical cluster's volume controller releases it.
	if err := b.down.Resource(pvsGVR).Delete(t.Context(), bName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the volume gone upstream", func(ctx context.Context) (bool, error) {
		_, err := upPVs.Get(ctx, "pvc-0001", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
