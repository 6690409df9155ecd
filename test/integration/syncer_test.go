package integration

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/syncer"
	syncerOptions "github.com/tessera-dev/tessera/syncer/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// writeKubeconfig writes a kubeconfig for server with a bearer token (or the
// admin's credentials of the shard when token is empty).
func writeKubeconfig(t *testing.T, s *framework.Shard, name, server, token string) string {
	t.Helper()
	admin := s.Config("")
	ca := admin.CAData
	if len(ca) == 0 {
		var err error
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	user := &clientcmdapi.AuthInfo{Token: token}
	if token == "" {
		user = &clientcmdapi.AuthInfo{ClientCertificateData: admin.CertData, ClientKeyData: admin.KeyData, ClientCertificate: admin.CertFile, ClientKey: admin.KeyFile}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = user
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runningSyncer is a tessera-syncer run in the test process.
type runningSyncer struct {
	cancel context.CancelFunc
	done   chan error
}

func startSyncer(t *testing.T, o *syncerOptions.Options) *runningSyncer {
	t.Helper()
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if errs := completed.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	ctx, cancel := context.WithCancel(t.Context())
	s, err := syncer.New(ctx, completed)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &runningSyncer{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func (r *runningSyncer) stop() {
	if r.cancel != nil {
		r.cancel()
		<-r.done
		r.cancel = nil
	}
}

// TestSyncer runs the syncer against a physical cluster stood in for by a
// workspace of the same shard that binds root:compute:kubernetes (a real
// API server with Deployments, without the controllers that would run
// them: the test writes the downstream status as a deployment controller
// would). Objects of a placed namespace go down into the namespace named
// by kcp's locator hash with the SyncTarget's key label and without the
// placement machinery; the syncer's finalizer holds them upstream; status
// comes back (kubectl shows READY 1/1); spec changes follow; a deletion
// upstream removes the copy and then the object. A syncer restarted after
// changes on both sides creates what is missing, deletes a downstream
// object without a source, and duplicates nothing; an emptied downstream
// namespace is deleted. The SyncTarget gets Ready from the syncer's own
// heartbeat and report of what the physical cluster serves.
func TestSyncer(t *testing.T) {
	s := framework.StartShard(t,
		func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} },
		withTokens(t, "syncer-token,syncer-kind,syncer-uid"))
	compute, _ := waitComputeBattery(t, s)
	phys := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "phys", nil).Spec.Cluster)
	app := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "app", nil).Spec.Cluster)
	createBinding(t, s, phys, "kubernetes", "root:compute", "kubernetes")
	bindRoot(t, s, compute, "workload.kcp.io", "scheduling.kcp.io")
	waitBound(t, s, phys, "kubernetes")
	// The syncer gets exactly the rights kubectl kcp workload sync grants.
	uid := createSyncTarget(t, s, compute, "kind", "syncer-kind")
	key := workloadv1alpha1.ToSyncTargetKey(compute.String(), "kind")
	o := syncerOptions.NewOptions()
	o.FromKubeconfig = writeKubeconfig(t, s, "from.kubeconfig", s.URL+"/clusters/root:compute", "syncer-token")
	o.ToKubeconfig = writeKubeconfig(t, s, "to.kubeconfig", s.URL+"/clusters/"+phys.String(), "")
	o.SyncTargetName, o.SyncTargetUID, o.FromCluster = "kind", uid, compute.String()
	o.DownstreamNamespaceCleanDelay = time.Second
	sy := startSyncer(t, o)

	eventually(t, 60*time.Second, "SyncTarget kind Ready from the syncer's heartbeat, its resources accepted", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(compute, "get", "synctarget", "kind", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status} {range .status.syncedResources[*]}{.resource}={.state} {end}`)
		return err == nil && strings.Contains(out, "deployments=Accepted") && strings.HasPrefix(out, "True "), fmt.Errorf("%s", out)
	})

	// The user's workspace: compute bound, the default Placement schedules
	// its namespaces to kind.
	createBinding(t, s, app, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	createBinding(t, s, app, "kubernetes", "root:compute", "kubernetes")
	waitBound(t, s, app, "kubernetes")
	s.MustKubectl(t, app, "create", "namespace", "web")
	eventually(t, 60*time.Second, "namespace web scheduled to kind", func(ctx context.Context) (bool, error) {
		ns, err := kube(t, s, app).CoreV1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
		return err == nil && ns.Labels["state.workload.kcp.io/"+key] == "Sync", err
	})
	eventually(t, 30*time.Second, "kubectl create deployment", func(ctx context.Context) (bool, error) {
		_, err := s.Kubectl(app, "create", "deployment", "kuard", "-n", "web", "--image=gcr.io/kuar-demo/kuard-amd64:blue")
		return err == nil, nil
	})
	s.MustKubectl(t, app, "create", "configmap", "settings", "-n", "web", "--from-literal=color=blue")

	locator := syncer.NamespaceLocator{
		SyncTarget: syncer.SyncTargetLocator{Cluster: compute.String(), Name: "kind", UID: types.UID(uid)},
		Cluster:    app.String(),
		Namespace:  "web",
	}
	downNS := syncer.DownstreamNamespace(locator)
	down := dynamicClient(t, s, phys)
	upDeployments := dynamicClient(t, s, app).Resource(deploymentsGVR).Namespace("web")
	var downDeployment *unstructured.Unstructured
	var err error
	eventually(t, 30*time.Second, "the Deployment downstream in "+downNS, func(ctx context.Context) (bool, error) {
		downDeployment, err = down.Resource(deploymentsGVR).Namespace(downNS).Get(ctx, "kuard", metav1.GetOptions{})
		return err == nil, nil
	})
	if got := downDeployment.GetLabels(); got["internal.workload.kcp.io/cluster"] != key || got["app"] != "kuard" || hasPrefixKey(got, "state.workload.kcp.io/") {
		t.Errorf("downstream Deployment's labels: %v", got)
	}
	if l, _, _ := unstructured.NestedStringMap(downDeployment.Object, "spec", "template", "metadata", "labels"); l["app"] != "kuard" {
		t.Errorf("downstream pod template labels: %v (the selector must match them)", l)
	}
	if logicalcluster.From(downDeployment) != phys {
		t.Errorf("downstream Deployment carries the upstream cluster: %v", downDeployment.GetAnnotations())
	}
	ns, err := down.Resource(namespacesGVR).Get(t.Context(), downNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := syncer.LocatorOf(ns.GetAnnotations()); !ok || l != locator || ns.GetLabels()["internal.workload.kcp.io/cluster"] != key {
		t.Errorf("downstream namespace: labels %v, annotations %v", ns.GetLabels(), ns.GetAnnotations())
	}
	eventually(t, 30*time.Second, "the ConfigMap downstream", func(ctx context.Context) (bool, error) {
		cm, err := down.Resource(configMapsGVR).Namespace(downNS).Get(ctx, "settings", metav1.GetOptions{})
		return err == nil && fmt.Sprint(cm.Object["data"]) == "map[color:blue]", nil
	})
	up, err := upDeployments.Get(t.Context(), "kuard", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(up.GetFinalizers(), "workload.kcp.io/syncer-"+key) {
		t.Errorf("upstream finalizers: %v", up.GetFinalizers())
	}

	// Status up: the physical cluster runs the pod.
	setDownstreamStatus := func(replicas int64) {
		t.Helper()
		eventually(t, 30*time.Second, "downstream status", func(ctx context.Context) (bool, error) {
			d, err := down.Resource(deploymentsGVR).Namespace(downNS).Get(ctx, "kuard", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			d.Object["status"] = map[string]any{"observedGeneration": d.GetGeneration(), "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "updatedReplicas": replicas}
			_, err = down.Resource(deploymentsGVR).Namespace(downNS).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err == nil, nil
		})
	}
	setDownstreamStatus(1)
	eventually(t, 30*time.Second, "kubectl get deployments: READY 1/1 from downstream", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(app, "get", "deployments", "-n", "web", "kuard", "--no-headers")
		f := strings.Fields(out)
		return err == nil && len(f) > 1 && f[1] == "1/1", fmt.Errorf("%s", out)
	})

	// Spec down.
	s.MustKubectl(t, app, "scale", "deployment", "kuard", "-n", "web", "--replicas=3")
	eventually(t, 30*time.Second, "3 replicas downstream", func(ctx context.Context) (bool, error) {
		d, err := down.Resource(deploymentsGVR).Namespace(downNS).Get(ctx, "kuard", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		return r == 3, nil
	})

	// Restart: while the syncer is away, a Deployment is created upstream,
	// the ConfigMap's copy is deleted downstream and an object without a
	// source appears downstream.
	sy.stop()
	eventually(t, 30*time.Second, "kubectl create deployment second", func(ctx context.Context) (bool, error) {
		_, err := s.Kubectl(app, "create", "deployment", "second", "-n", "web", "--image=nginx")
		return err == nil, nil
	})
	if err := down.Resource(configMapsGVR).Namespace(downNS).Delete(t.Context(), "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	orphan := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{
		"name": "orphan", "labels": map[string]any{"internal.workload.kcp.io/cluster": key}},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "orphan"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "orphan"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}}}
	if _, err := down.Resource(deploymentsGVR).Namespace(downNS).Create(t.Context(), orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The restarted syncer also imports a custom resource of the physical
	// cluster: workspaces bound to the export get it, and its objects sync.
	mustCreateWidgetCRD(t, s, phys)
	o.Resources = []string{"widgets.example.com"}
	startSyncer(t, o)
	eventually(t, 30*time.Second, "after the restart: second and settings downstream, orphan gone", func(ctx context.Context) (bool, error) {
		_, err1 := down.Resource(deploymentsGVR).Namespace(downNS).Get(ctx, "second", metav1.GetOptions{})
		_, err2 := down.Resource(configMapsGVR).Namespace(downNS).Get(ctx, "settings", metav1.GetOptions{})
		_, err3 := down.Resource(deploymentsGVR).Namespace(downNS).Get(ctx, "orphan", metav1.GetOptions{})
		return err1 == nil && err2 == nil && apierrors.IsNotFound(err3), nil
	})
	list, err := down.Resource(deploymentsGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range list.Items {
		names = append(names, d.GetNamespace()+"/"+d.GetName())
	}
	if want := []string{downNS + "/kuard", downNS + "/second"}; !slices.Equal(names, want) {
		t.Errorf("downstream Deployments after the restart: %v, want %v", names, want)
	}

	eventually(t, 60*time.Second, "an imported Widget synced down", func(ctx context.Context) (bool, error) {
		if _, err := s.Kubectl(app, "apply", "-n", "web", "-f", yamlFile(t, "widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n")); err != nil {
			return false, nil
		}
		w, err := down.Resource(widgetsGVR).Namespace(downNS).Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
		return size == 3, nil
	})
	if out := s.MustKubectl(t, compute, "get", "apiexports.v1alpha1.apis.kcp.io", "kubernetes", "-o", "jsonpath={.spec.latestResourceSchemas}"); !strings.Contains(out, ".widgets.example.com") {
		t.Errorf("root:compute's export kubernetes after the import: %s", out)
	}
	s.MustKubectl(t, app, "delete", "widget", "w1", "-n", "web", "--wait=false")

	// Upsync: a volume the physical cluster makes for a synced claim comes
	// up into the workspace, bound to the workspace's claim, and goes when
	// it goes.
	s.MustKubectl(t, app, "apply", "-n", "web", "-f", yamlFile(t, "pvc.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n"))
	eventually(t, 30*time.Second, "the claim downstream", func(ctx context.Context) (bool, error) {
		_, err := down.Resource(pvcsGVR).Namespace(downNS).Get(ctx, "data", metav1.GetOptions{})
		return err == nil, nil
	})
	pv := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
		"metadata": map[string]any{"name": "pvc-data"},
		"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "hostPath": map[string]any{"path": "/data"},
			"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "namespace": downNS, "name": "data", "uid": "downstream-uid"}}}}
	created, err := down.Resource(pvsGVR).Create(t.Context(), pv, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"phase": "Bound"}
	if _, err := down.Resource(pvsGVR).UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the volume upsynced, bound to the workspace's claim", func(ctx context.Context) (bool, error) {
		u, err := dynamicClient(t, s, app).Resource(pvsGVR).Get(ctx, "pvc-data", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ns, _, _ := unstructured.NestedString(u.Object, "spec", "claimRef", "namespace")
		uid, _, _ := unstructured.NestedString(u.Object, "spec", "claimRef", "uid")
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		// Once the workspace's claim is bound to it, the volume coordination
		// switches it from Upsync to Sync (TestSyncerMovesVolumes).
		state := u.GetLabels()["state.workload.kcp.io/"+key]
		return ns == "web" && uid == "" && phase == "Bound" && (state == "Upsync" || state == "Sync"), fmt.Errorf("%v", u.Object)
	})
	if out := s.MustKubectl(t, app, "get", "pv"); !strings.Contains(out, "pvc-data") {
		t.Errorf("kubectl get pv in the workspace:\n%s", out)
	}
	// The pair looks bound in the workspace, as in one cluster.
	eventually(t, 30*time.Second, "the workspace's claim bound to the upsynced volume", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(app, "get", "pvc", "data", "-n", "web", "-o", "jsonpath={.spec.volumeName}")
		return err == nil && out == "pvc-data", fmt.Errorf("%s", out)
	})
	// The claim deleted: a volume that is not Delete stays in the
	// workspace, Released, for manual cleanup, and the physical cluster's
	// copy goes (Retain: the storage stays).
	s.MustKubectl(t, app, "delete", "pvc", "data", "-n", "web", "--wait=false")
	eventually(t, 30*time.Second, "the volume Released upstream, gone downstream", func(ctx context.Context) (bool, error) {
		u, err := dynamicClient(t, s, app).Resource(pvsGVR).Get(ctx, "pvc-data", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		_, downErr := down.Resource(pvsGVR).Get(ctx, "pvc-data", metav1.GetOptions{})
		return phase == "Released" && len(u.GetFinalizers()) == 0 && apierrors.IsNotFound(downErr), fmt.Errorf("%v, downstream: %v", u.Object, downErr)
	})
	s.MustKubectl(t, app, "delete", "pv", "pvc-data")

	// Deletion: the copy goes, then the syncer's finalizer, then the object;
	// the emptied namespace goes too.
	for _, name := range []string{"kuard", "second"} {
		s.MustKubectl(t, app, "delete", "deployment", name, "-n", "web", "--wait=false")
	}
	s.MustKubectl(t, app, "delete", "configmap", "settings", "-n", "web", "--wait=false")
	eventually(t, 30*time.Second, "deleted upstream and downstream", func(ctx context.Context) (bool, error) {
		l, err := upDeployments.List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) > 0 {
			return false, err
		}
		l, err = down.Resource(deploymentsGVR).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	})
	eventually(t, 30*time.Second, "the emptied downstream namespace deleted", func(ctx context.Context) (bool, error) {
		_, err := down.Resource(namespacesGVR).Get(ctx, downNS, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

var (
	pvcsGVR = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func hasPrefixKey(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
