package integration

import (
	"context"
	"fmt"
	"github.com/tessera-dev/tessera/pkg/cli/workload"
	rbacv1 "k8s.io/api/rbac/v1"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/openapi/apischema"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

const computeObjects = `# The Location comes first: with a SyncTarget and no Location, the
# default-Location controller would make a Location named default itself.
apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: default
spec:
  resource:
    group: workload.kcp.io
    version: v1alpha1
    resource: synctargets
  instanceSelector: {}
  availableSelectorLabels:
  - key: region
    values: [eu, us]
---
apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: kind
  labels:
    region: eu
spec:
  supportedAPIExports:
  - path: root:compute
    export: kubernetes
---
apiVersion: scheduling.kcp.io/v1alpha1
kind: Placement
metadata:
  name: default
spec:
  locationResource:
    group: workload.kcp.io
    version: v1alpha1
    resource: synctargets
  locationSelectors:
  - matchLabels: {cloud: nowhere}
  namespaceSelector: {}
`

const badLocation = `apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: bad
spec:
  resource:
    group: apps
    version: v1
    resource: deployments
  availableSelectorLabels:
  - key: "not a label key"
    values: []
`

// TestComputeAPIs: root publishes kcp's transparent multi-cluster APIs as
// the APIExports workload.kcp.io and scheduling.kcp.io; a workspace serves
// SyncTargets, Locations and Placements only once it binds them; kubectl
// shows kcp's printer columns, a Placement without a matching Location
// is Pending, the schemas
// refuse what kcp refuses, and scheduling.kcp.io's maximal permission
// policy keeps a workspace's own admin from writing a Placement's status.
func TestComputeAPIs(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "alice-token,alice,alice-uid"))
	waitComputeExports(t, s)

	c := logicalcluster.Name("compute")
	createCluster(t, s, c)
	if out, err := s.Kubectl(c, "get", "placements"); err == nil || !strings.Contains(out, `doesn't have a resource type "placements"`) {
		t.Errorf("placements served without a binding: %v\n%s", err, out)
	}
	bindRoot(t, s, c, "workload.kcp.io", "scheduling.kcp.io")

	var out string
	eventually(t, 30*time.Second, "the compute objects to be created", func(ctx context.Context) (bool, error) {
		var err error
		out, err = s.Kubectl(c, "apply", "-f", yamlFile(t, "compute.yaml", computeObjects))
		return err == nil, nil
	})
	// An apply retried while the bound resources come up may find some
	// objects of the first attempt.
	for _, want := range []string{"synctarget.workload.kcp.io/kind", "location.scheduling.kcp.io/default", "placement.scheduling.kcp.io/default"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + ` (created|unchanged)$`).MatchString(out) {
			t.Errorf("kubectl apply: want %q created in\n%s", want, out)
		}
	}
	header := strings.Fields(strings.SplitN(s.MustKubectl(t, c, "get", "locations"), "\n", 2)[0])
	if strings.Join(header, " ") != "NAME RESOURCE AVAILABLE INSTANCES LABELS AGE" {
		t.Errorf("kubectl get locations columns: %v", header)
	}
	header = strings.Fields(strings.SplitN(s.MustKubectl(t, c, "get", "synctargets", "-o", "wide"), "\n", 2)[0])
	if strings.Join(header, " ") != "NAME LOCATION READY SYNCED API RESOURCES KEY AGE" {
		t.Errorf("kubectl get synctargets -o wide columns: %v", header)
	}
	// No Location matches: the Placement stays Pending.
	eventually(t, 30*time.Second, "the Placement Pending without a matching Location", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(c, "get", "placement", "default", "-o", `jsonpath={.status.phase} {.status.conditions[?(@.type=="Ready")].reason}`)
		return out == "Pending LocationNoMatch", err
	})
	if got := s.MustKubectl(t, c, "get", "synctarget", "kind", "-o", "jsonpath={.spec.supportedAPIExports[0].path}:{.spec.supportedAPIExports[0].export}"); got != "root:compute:kubernetes" {
		t.Errorf("the SyncTarget's supportedAPIExports: %q", got)
	}

	out, err := s.Kubectl(c, "apply", "-f", yamlFile(t, "bad.yaml", badLocation))
	for _, want := range []string{
		`The Location "bad" is invalid`,
		`spec.resource.group: Unsupported value: "apps"`,
		`spec.resource.resource: Unsupported value: "deployments"`,
		`spec.availableSelectorLabels[0].key: Invalid value: "not a label key"`,
		`spec.availableSelectorLabels[0].values: Invalid value: 0`,
	} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("an invalid Location: want %q in\n%s", want, out)
		}
	}

	// Cells are kcp's field, but nothing schedules by them: refused, not
	// stored to do nothing.
	out, err = s.Kubectl(c, "patch", "synctarget", "kind", "--type=merge", "-p", `{"spec":{"cells":{"zone":"a"}}}`)
	if err == nil || !strings.Contains(out, "spec.cells: Invalid value") || !strings.Contains(out, "cells are not supported") {
		t.Errorf("a SyncTarget with cells: %v\n%s", err, out)
	}

	// alice is cluster-admin in the workspace: she writes Placements, and
	// only reads their status, as the export's policy says.
	bindClusterRole(t, s, c, "", "alice-admin", "cluster-admin", authzUser("alice"))
	eventuallyAllowed(t, "alice labels the placement", func(ctx context.Context) error {
		_, err := kubectlAs(t, s, c, "alice-token", "label", "placement", "default", "team=a")
		return err
	})
	out, err = kubectlAs(t, s, c, "alice-token", "patch", "placement", "default", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Bound"}}`)
	if err == nil || !strings.Contains(out, "maximal permission policy") {
		t.Errorf("alice wrote a Placement's status: %v\n%s", err, out)
	}
	if got := s.MustKubectl(t, c, "get", "placement", "default", "-o", "jsonpath={.status.phase}"); got != "Pending" {
		t.Errorf("the Placement's phase after alice's attempt: %q", got)
	}
}

var (
	syncTargetsGVR = schema.GroupVersionResource{Group: "workload.kcp.io", Version: "v1alpha1", Resource: "synctargets"}
	placementsGVR  = schema.GroupVersionResource{Group: "scheduling.kcp.io", Version: "v1alpha1", Resource: "placements"}
)

// heartbeats sends a syncer's heartbeats for the named SyncTargets of a
// cluster every 300ms, until stop is called; stopping one name ends its
// heartbeats only.
type heartbeats struct {
	mu      sync.Mutex
	stopped map[string]bool
}

func startHeartbeats(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, names ...string) *heartbeats {
	h := &heartbeats{stopped: map[string]bool{}}
	client := dynamicClient(t, s, cluster).Resource(syncTargetsGVR)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for _, name := range names {
				h.mu.Lock()
				stopped := h.stopped[name]
				h.mu.Unlock()
				if stopped {
					continue
				}
				patch := fmt.Sprintf(`{"status":{"lastSyncerHeartbeatTime":%q}}`, time.Now().UTC().Format(time.RFC3339))
				_, _ = client.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *heartbeats) stop(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped[name] = true
}

// TestComputeScheduling plays the seed's placement flow on one shard: a
// compute workspace holds two SyncTargets with heartbeats and a Location
// selecting them; a user workspace's Placement selects the Location by its
// labels in the compute workspace, is Bound once its namespaces are
// annotated, and schedules one SyncTarget, whose state label
// (state.workload.kcp.io/<key>=Sync) the namespaces get. When that
// SyncTarget's heartbeats stop, it turns not Ready after the threshold and
// the namespaces move to the other one: the old label is marked with
// deletion.internal.workload.kcp.io/<key> and removed five seconds later.
// Deleting the Placement unplaces the namespaces.
func TestComputeScheduling(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) { o.SyncTargetHeartbeatThreshold = 2 * time.Second })
	waitComputeExports(t, s)
	compute := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "compute", nil).Spec.Cluster)
	app := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "app", nil).Spec.Cluster)
	createBinding(t, s, compute, "workload.kcp.io", "root", "workload.kcp.io")
	createBinding(t, s, compute, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	createBinding(t, s, app, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	for _, c := range []logicalcluster.Name{compute, app} {
		waitBound(t, s, c, "scheduling.kcp.io")
	}
	waitBound(t, s, compute, "workload.kcp.io")

	applyEventually(t, s, compute, `apiVersion: workload.kcp.io/v1alpha1
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
apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: us-1
  labels: {region: us}
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
	beats := startHeartbeats(t, s, compute, "eu-1", "eu-2")
	keys := map[string]string{}
	for _, name := range []string{"eu-1", "eu-2"} {
		keys[name] = workloadv1alpha1.ToSyncTargetKey(compute.String(), name)
		eventually(t, 30*time.Second, "SyncTarget "+name+" Ready with its key", func(ctx context.Context) (bool, error) {
			out, err := s.Kubectl(compute, "get", "synctarget", name, "-o", `jsonpath={.metadata.labels.internal\.workload\.kcp\.io/key} {.status.conditions[?(@.type=="Ready")].status}`)
			return out == keys[name]+" True", err
		})
	}
	eventually(t, 30*time.Second, "Location eu with 2 of 2 instances available", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(compute, "get", "location", "eu", "-o", `jsonpath={.status.instances}/{.status.availableInstances} {.metadata.annotations.scheduling\.kcp\.io/labels}`)
		return out == "2/2 region=eu", err
	})
	if out := s.MustKubectl(t, compute, "get", "synctarget", "us-1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`); out != "ErrorHeartbeat" {
		t.Errorf("a SyncTarget without heartbeats: Ready reason %q", out)
	}

	s.MustKubectl(t, app, "create", "namespace", "web")
	s.MustKubectl(t, app, "create", "configmap", "before", "-n", "web")
	s.MustKubectl(t, app, "create", "configmap", "elsewhere", "-n", "default")
	// A user cannot schedule an object by hand.
	s.MustKubectl(t, app, "create", "configmap", "sneaky", "-n", "default")
	s.MustKubectl(t, app, "label", "configmap", "sneaky", "-n", "default", "state.workload.kcp.io/abc=Sync")
	if out := s.MustKubectl(t, app, "get", "configmap", "sneaky", "-n", "default", "-o", "jsonpath={.metadata.labels}"); strings.Contains(out, "state.workload.kcp.io") {
		t.Errorf("a state label set by hand on an unplaced object: %s", out)
	}
	applyEventually(t, s, app, euPlacement)
	first := waitPlacementBound(t, s, app)
	nsState := func(ctx context.Context) (map[string]string, map[string]string, error) {
		ns, err := kube(t, s, app).CoreV1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return nil, nil, err
		}
		return ns.Labels, ns.Annotations, nil
	}
	eventually(t, 30*time.Second, "namespace web synced to the scheduled SyncTarget", func(ctx context.Context) (bool, error) {
		lbls, ann, err := nsState(ctx)
		_, placed := ann["scheduling.kcp.io/placement"]
		return err == nil && placed && lbls["state.workload.kcp.io/"+first] == "Sync", err
	})
	cmState := func(ctx context.Context, ns, name string) (map[string]string, error) {
		cm, err := kube(t, s, app).CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return cm.Labels, nil
	}
	eventually(t, 30*time.Second, "the existing configmap of web synced too", func(ctx context.Context) (bool, error) {
		lbls, err := cmState(ctx, "web", "before")
		return err == nil && lbls["state.workload.kcp.io/"+first] == "Sync", err
	})
	// A new object gets the state in its create.
	s.MustKubectl(t, app, "create", "configmap", "after", "-n", "web")
	if lbls, err := cmState(t.Context(), "web", "after"); err != nil || lbls["state.workload.kcp.io/"+first] != "Sync" {
		t.Errorf("a configmap created in a placed namespace: %v %v", err, lbls)
	}
	if lbls, err := cmState(t.Context(), "default", "elsewhere"); err != nil || len(lbls) != 0 {
		t.Errorf("a configmap of an unplaced namespace: %v %v", err, lbls)
	}
	// Nobody but the shard's controllers places a namespace.
	kcpAdmin := kcpAdminKubectl(t, s, t.TempDir())
	if out, err := kcpAdmin("root:app", "label", "namespace", "default", "state.workload.kcp.io/"+keys["eu-2"]+"=Sync"); err == nil || !strings.Contains(out, "set by its Placements") {
		t.Errorf("a workspace admin placing a namespace by hand: %v\n%s", err, out)
	}
	if out, err := kcpAdmin("root:app", "label", "namespace", "web", "team=a"); err != nil {
		t.Errorf("a workspace admin labelling a placed namespace: %v\n%s", err, out)
	}
	// The default namespace is not selected.
	if ns, err := kube(t, s, app).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil || ns.Labels["state.workload.kcp.io/"+first] != "" {
		t.Errorf("namespace default: %v %v", err, ns.GetLabels())
	}

	// The scheduled SyncTarget loses its syncer.
	var dead, alive string
	for name, key := range keys {
		if key == first {
			dead = name
		} else {
			alive = name
		}
	}
	beats.stop(dead)
	eventually(t, 30*time.Second, "SyncTarget "+dead+" not Ready", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(compute, "get", "synctarget", dead, "-o", `jsonpath={.status.conditions[?(@.type=="HeartbeatHealthy")].reason}`)
		return out == "ErrorHeartbeat", err
	})
	eventually(t, 30*time.Second, "namespace web moving to "+alive, func(ctx context.Context) (bool, error) {
		lbls, ann, err := nsState(ctx)
		return err == nil && lbls["state.workload.kcp.io/"+keys[alive]] == "Sync" &&
			(lbls["state.workload.kcp.io/"+first] == "" || ann["deletion.internal.workload.kcp.io/"+first] != ""), err
	})
	eventually(t, 30*time.Second, "the old SyncTarget's label removed after the grace period", func(ctx context.Context) (bool, error) {
		lbls, ann, err := nsState(ctx)
		return err == nil && lbls["state.workload.kcp.io/"+first] == "" && ann["deletion.internal.workload.kcp.io/"+first] == "", err
	})
	eventually(t, 30*time.Second, "the configmaps of web moved along", func(ctx context.Context) (bool, error) {
		for _, name := range []string{"before", "after"} {
			lbls, err := cmState(ctx, "web", name)
			if err != nil || lbls["state.workload.kcp.io/"+keys[alive]] != "Sync" || lbls["state.workload.kcp.io/"+first] != "" {
				return false, err
			}
		}
		return true, nil
	})
	if out := s.MustKubectl(t, compute, "get", "location", "eu", "-o", `jsonpath={.status.instances}/{.status.availableInstances}`); out != "2/1" {
		t.Errorf("Location eu after losing a syncer: %s", out)
	}

	// Deleting the Placement unplaces the namespace.
	s.MustKubectl(t, app, "delete", "placement", "eu")
	eventually(t, 30*time.Second, "namespace web unplaced", func(ctx context.Context) (bool, error) {
		lbls, ann, err := nsState(ctx)
		_, placed := ann["scheduling.kcp.io/placement"]
		return err == nil && !placed && ann["deletion.internal.workload.kcp.io/"+keys[alive]] != "" && lbls["state.workload.kcp.io/"+keys[alive]] == "Sync", err
	})
}

// reportKubernetesSynced does what a syncer does once it has compared its
// physical cluster with the SyncTarget's synced resources, which the shard
// computes from spec.supportedAPIExports: it accepts them all. It waits
// until they include the resources of the export kubernetes with identity.
func reportKubernetesSynced(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, name, identity string) {
	t.Helper()
	client := dynamicClient(t, s, cluster).Resource(syncTargetsGVR)
	eventually(t, 30*time.Second, "SyncTarget "+name+" accepting the resources of kubernetes", func(ctx context.Context) (bool, error) {
		st, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		synced, _, _ := unstructured.NestedSlice(st.Object, "status", "syncedResources")
		found := map[string]bool{}
		for _, r := range synced {
			m := r.(map[string]any)
			if m["identityHash"] == identity {
				group, _ := m["group"].(string)
				found[group+"/"+fmt.Sprint(m["resource"])] = true
			}
			m["state"] = "Accepted"
		}
		for _, gr := range []string{"apps/deployments", "/services", "networking.k8s.io/ingresses", "/pods", "/endpoints"} {
			if !found[gr] {
				return false, fmt.Errorf("%s not among the synced resources %v", gr, synced)
			}
		}
		if err := unstructured.SetNestedSlice(st.Object, synced, "status", "syncedResources"); err != nil {
			return false, err
		}
		_, err = client.UpdateStatus(ctx, st, metav1.UpdateOptions{})
		return err == nil, nil
	})
}

// bindRoot binds root's exports of the given names in cluster, each as a
// binding of the same name, and waits until they are bound.
func bindRoot(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, exports ...string) {
	t.Helper()
	for _, e := range exports {
		createBinding(t, s, cluster, e, "root", e)
	}
	for _, e := range exports {
		waitBound(t, s, cluster, e)
	}
}

// waitComputeExports waits until root's APIExports workload.kcp.io and
// scheduling.kcp.io have identities.
func waitComputeExports(t *testing.T, s *framework.Shard) {
	t.Helper()
	root := kcpClient(t, s, logicalcluster.Root)
	for _, name := range []string{"workload.kcp.io", "scheduling.kcp.io"} {
		eventually(t, 30*time.Second, "APIExport root:"+name+" with an identity", func(ctx context.Context) (bool, error) {
			e, err := root.APIExports().Get(ctx, name, metav1.GetOptions{})
			return err == nil && identityHashRE.MatchString(e.Status.IdentityHash), err
		})
	}
}

// waitComputeBattery waits until the battery root-compute-workspace has
// set up root:compute with the APIExport kubernetes (its five resources,
// an identity and the compute annotation), and returns root:compute's
// logical cluster and the export's identity.
func waitComputeBattery(t *testing.T, s *framework.Shard) (logicalcluster.Name, string) {
	t.Helper()
	var compute logicalcluster.Name
	var identity string
	eventually(t, 60*time.Second, "root:compute's APIExport kubernetes", func(ctx context.Context) (bool, error) {
		ws, err := kcpClient(t, s, logicalcluster.Root).Workspaces().Get(ctx, "compute", metav1.GetOptions{})
		if err != nil || ws.Spec.Cluster == "" {
			return false, nil
		}
		compute = logicalcluster.Name(ws.Spec.Cluster)
		e, err := kcpClient(t, s, compute).APIExports().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		identity = e.Status.IdentityHash
		return identity != "" && len(e.Spec.LatestResourceSchemas) >= len(apischema.Kubernetes()) && e.Annotations["extra.apis.kcp.io/compute.workload.kcp.io"] == "true", nil
	})
	return compute, identity
}

// applyEventually applies manifest in cluster with kubectl, retrying while
// a just bound resource is not served yet.
func applyEventually(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, manifest string) {
	t.Helper()
	var out string
	eventually(t, 30*time.Second, "kubectl apply in "+cluster.String(), func(ctx context.Context) (bool, error) {
		var err error
		out, err = s.Kubectl(cluster, "apply", "-f", yamlFile(t, "manifest.yaml", manifest))
		if err != nil {
			return false, fmt.Errorf("%w: %s", err, out)
		}
		return true, nil
	})
}

// TestAPIBindingExtraAnnotations: a binding carries the extra.apis.kcp.io/
// annotations of its export, as in kcp (a compute service's export marks
// its bindings so), and follows when they change.
func TestAPIBindingExtraAnnotations(t *testing.T) {
	s := framework.StartShard(t)
	provider, consumer := logicalcluster.Name("provider"), logicalcluster.Name("consumer")
	createCluster(t, s, provider)
	createCluster(t, s, consumer)
	publishCowboys(t, s, provider)
	s.MustKubectl(t, provider, "annotate", "apiexport", "wildwest.dev", "extra.apis.kcp.io/compute.workload.kcp.io=true", "other=no")
	createBinding(t, s, consumer, "cowboys", provider.String(), "wildwest.dev")
	waitBound(t, s, consumer, "cowboys")
	annotations := func(ctx context.Context) map[string]string {
		b, err := kcpClient(t, s, consumer).APIBindings().Get(ctx, "cowboys", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return b.Annotations
	}
	eventually(t, 30*time.Second, "the export's extra annotation on the binding", func(ctx context.Context) (bool, error) {
		a := annotations(ctx)
		_, other := a["other"]
		return a["extra.apis.kcp.io/compute.workload.kcp.io"] == "true" && !other, nil
	})
	s.MustKubectl(t, provider, "annotate", "apiexport", "wildwest.dev", "extra.apis.kcp.io/compute.workload.kcp.io-")
	eventually(t, 30*time.Second, "the extra annotation gone from the binding", func(ctx context.Context) (bool, error) {
		_, ok := annotations(ctx)["extra.apis.kcp.io/compute.workload.kcp.io"]
		return !ok, nil
	})
}

// TestBindCompute plays the seed's compute quickstart with the real kubectl
// and Tessera's plugins on a shard started with the battery
// root-compute-workspace, the syncer's heartbeats and reports standing in
// for a physical cluster: root:compute holds the APIExport kubernetes;
// there, a SyncTarget and a Location are made; in a user workspace,
// `kubectl kcp bind compute root:compute` binds root:scheduling.kcp.io and
// root:compute:kubernetes, creates a Placement and waits until it is ready;
// a Deployment created with kubectl is then scheduled to the SyncTarget.
func TestBindCompute(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} })
	plugins := wsPlugin(t)
	kcpPlugin(t, plugins)
	w := newWSSession(t, s.Kubeconfig, plugins)
	compute, identity := waitComputeBattery(t, s)
	w.must("ws", "root:compute")
	w.must("kcp", "bind", "apiexport", "root:workload.kcp.io")
	w.must("kcp", "bind", "apiexport", "root:scheduling.kcp.io")
	manifest := yamlFile(t, "compute.yaml", `apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: kind
spec:
  supportedAPIExports:
  - export: kubernetes
---
apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: default
spec:
  resource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  instanceSelector: {}
`)
	eventually(t, 30*time.Second, "the compute objects", func(ctx context.Context) (bool, error) {
		_, err := w.run("apply", "-f", manifest)
		return err == nil, nil
	})
	reportKubernetesSynced(t, s, compute, "kind", identity)
	startHeartbeats(t, s, compute, "kind")
	eventually(t, 30*time.Second, "SyncTarget kind Ready", func(ctx context.Context) (bool, error) {
		out, err := w.run("get", "synctarget", "kind", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		return err == nil && out == "True", nil
	})

	w.must("ws", "root")
	w.must("ws", "create", "app", "--enter")
	out := w.must("kcp", "bind", "compute", "root:compute")
	for _, want := range []string{`Binding APIExport "root:scheduling.kcp.io".`, `Binding APIExport "root:compute:kubernetes".`, "is ready."} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl kcp bind compute: want %q in\n%s", want, out)
		}
	}
	key := workloadv1alpha1.ToSyncTargetKey(compute.String(), "kind")
	app := logicalcluster.Name(waitWorkspaceReady(t, s, logicalcluster.Root, "app").Spec.Cluster)
	eventually(t, 30*time.Second, "namespace default synced to SyncTarget kind", func(ctx context.Context) (bool, error) {
		ns, err := kube(t, s, app).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil && ns.Labels["state.workload.kcp.io/"+key] == "Sync", err
	})
	if out := w.must("get", "placements", "-o", "jsonpath={.items[*].status.phase} {.items[*].status.selectedLocation.path}"); out != "Bound root:compute" {
		t.Errorf("the Placement: %q", out)
	}
	// The workspace runs Deployments now, scheduled to the SyncTarget.
	eventually(t, 30*time.Second, "kubectl create deployment", func(ctx context.Context) (bool, error) {
		out, err := w.run("create", "deployment", "kuard", "--image=gcr.io/kuar-demo/kuard-amd64:blue")
		if err != nil {
			return false, fmt.Errorf("%w: %s", err, out)
		}
		return true, nil
	})
	if out := w.must("get", "deployment", "kuard", "-o", "jsonpath={.metadata.labels.state\\.workload\\.kcp\\.io/"+key+"}"); out != "Sync" {
		t.Errorf("the Deployment's state label: %q", out)
	}
	if header := strings.Fields(strings.SplitN(w.must("get", "deployments"), "\n", 2)[0]); strings.Join(header, " ") != "NAME READY UP-TO-DATE AVAILABLE AGE" {
		t.Errorf("kubectl get deployments columns: %v", header)
	}
	// A second run finds the bindings and the Placement there.
	if out := w.must("kcp", "bind", "compute", "root:compute"); strings.Contains(out, "Binding APIExport") || !strings.Contains(out, "is ready.") {
		t.Errorf("kubectl kcp bind compute again:\n%s", out)
	}
}

// syncerVW returns a dynamic client of the syncer virtual workspace of a
// SyncTarget, for one cluster or * , authenticated by token only.
func syncerVW(t *testing.T, s *framework.Shard, stCluster logicalcluster.Name, name, uid, cluster, token string) dynamic.Interface {
	t.Helper()
	admin := s.Config("")
	return syncerVWAt(t, s.URL, rest.TLSClientConfig{CAFile: admin.CAFile, CAData: admin.CAData}, stCluster, name, uid, cluster, token)
}

// syncerVWAt is syncerVW for the virtual workspaces at base.
func syncerVWAt(t *testing.T, base string, tls rest.TLSClientConfig, stCluster logicalcluster.Name, name, uid, cluster, token string) dynamic.Interface {
	t.Helper()
	cfg := &rest.Config{
		Host:            base + "/services/syncer/" + stCluster.String() + "/" + name + "/" + uid + "/clusters/" + cluster,
		BearerToken:     token,
		TLSClientConfig: tls,
	}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// TestSyncerVirtualWorkspace: the syncer virtual workspace of a SyncTarget
// shows its syncer exactly the objects of its synced resources that are
// scheduled to it, across workspaces, in lists and watches; the syncer
// adds and removes its finalizer and nothing else; when the object's
// namespace is no longer placed there, the syncer sees a
// deletionTimestamp while its finalizer holds the object, and once it
// removes the finalizer the object leaves its view. Other users, another
// UID and unscheduled objects get nothing.
func TestSyncerVirtualWorkspace(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "syncer-token,syncer-kind,syncer-uid", "alice-token,alice,alice-uid"))
	waitComputeExports(t, s)
	compute := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "compute", nil).Spec.Cluster)
	app := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "app", nil).Spec.Cluster)
	createBinding(t, s, compute, "workload.kcp.io", "root", "workload.kcp.io")
	createBinding(t, s, compute, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	createBinding(t, s, app, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	waitBound(t, s, compute, "workload.kcp.io")
	waitBound(t, s, app, "scheduling.kcp.io")
	applyEventually(t, s, compute, `apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: kind
---
apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: default
spec:
  resource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  instanceSelector: {}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: sync-kind
rules:
- apiGroups: [workload.kcp.io]
  resources: [synctargets]
  resourceNames: [kind]
  verbs: [sync]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: sync-kind
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sync-kind}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: syncer-kind}
`)
	sts := dynamicClient(t, s, compute).Resource(syncTargetsGVR)
	if _, err := sts.Patch(t.Context(), "kind", types.MergePatchType,
		[]byte(`{"status":{"syncedResources":[{"resource":"configmaps","versions":["v1"],"identityHash":"","state":"Accepted"}]}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	startHeartbeats(t, s, compute, "kind")
	st, err := sts.Get(t.Context(), "kind", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid, key := string(st.GetUID()), workloadv1alpha1.ToSyncTargetKey(compute.String(), "kind")

	s.MustKubectl(t, app, "create", "namespace", "web")
	s.MustKubectl(t, app, "create", "configmap", "one", "-n", "web", "--from-literal=a=1")
	s.MustKubectl(t, app, "create", "configmap", "unplaced", "-n", "default")
	applyEventually(t, s, app, `apiVersion: scheduling.kcp.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  locationWorkspace: root:compute
  locationResource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  locationSelectors: [{}]
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: web}
`)
	all := syncerVW(t, s, compute, "kind", uid, "*", "syncer-token").Resource(configMapsGVR)
	inApp := syncerVW(t, s, compute, "kind", uid, app.String(), "syncer-token").Resource(configMapsGVR)
	listed := func(ctx context.Context) ([]string, error) {
		l, err := all.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, o := range l.Items {
			out = append(out, logicalcluster.From(&o).String()+"/"+o.GetNamespace()+"/"+o.GetName())
		}
		return out, nil
	}
	eventually(t, 30*time.Second, "the syncer to see configmap web/one only", func(ctx context.Context) (bool, error) {
		got, err := listed(ctx)
		return err == nil && strings.Join(got, ",") == app.String()+"/web/one", err
	})

	// Others see nothing.
	if _, err := syncerVW(t, s, compute, "kind", uid, "*", "alice-token").Resource(configMapsGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice listing through the syncer virtual workspace: %v", err)
	}
	if _, err := syncerVW(t, s, compute, "kind", "not-the-uid", "*", "syncer-token").Resource(configMapsGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("another UID: %v", err)
	}
	if _, err := inApp.Namespace("default").Get(t.Context(), "unplaced", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an unscheduled configmap read through the virtual workspace: %v", err)
	}
	if _, err := inApp.Namespace("web").Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}}, metav1.CreateOptions{}); err == nil {
		t.Error("the syncer created an upstream object")
	}

	// A watch sees a new scheduled object.
	w, err := all.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	s.MustKubectl(t, app, "create", "configmap", "two", "-n", "web")
	timeout := time.After(30 * time.Second)
	for seen := false; !seen; {
		select {
		case ev := <-w.ResultChan():
			if o, ok := ev.Object.(*unstructured.Unstructured); ok && o.GetName() == "two" && o.GetLabels()["state.workload.kcp.io/"+key] == "Sync" {
				seen = true
			}
		case <-timeout:
			t.Fatal("no watch event of configmap two")
		}
	}

	// The syncer holds "one" with its finalizer; its other changes are
	// dropped.
	one, err := inApp.Namespace("web").Get(t.Context(), "one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one.SetFinalizers([]string{"workload.kcp.io/syncer-" + key})
	_ = unstructured.SetNestedField(one.Object, "changed", "data", "a")
	if _, err := inApp.Namespace("web").Update(t.Context(), one, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the syncer adding its finalizer: %v", err)
	}
	upstream, err := kube(t, s, app).CoreV1().ConfigMaps("web").Get(t.Context(), "one", metav1.GetOptions{})
	if err != nil || len(upstream.Finalizers) != 1 || upstream.Data["a"] != "1" {
		t.Errorf("upstream after the syncer's update: %v %v %v", err, upstream.Finalizers, upstream.Data)
	}

	// The workspace stops using the Location: the syncer sees a deletion.
	s.MustKubectl(t, app, "delete", "placement", "web")
	eventually(t, 30*time.Second, "configmap one shown deleted to the syncer", func(ctx context.Context) (bool, error) {
		o, err := inApp.Namespace("web").Get(ctx, "one", metav1.GetOptions{})
		return err == nil && o.GetDeletionTimestamp() != nil, nil
	})
	eventually(t, 30*time.Second, "configmap two gone from the syncer's view", func(ctx context.Context) (bool, error) {
		got, err := listed(ctx)
		return err == nil && strings.Join(got, ",") == app.String()+"/web/one", err
	})
	// The syncer deleted the downstream copy and lets go.
	one, err = inApp.Namespace("web").Get(t.Context(), "one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one.SetFinalizers(nil)
	if _, err := inApp.Namespace("web").Update(t.Context(), one, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the syncer removing its finalizer: %v", err)
	}
	eventually(t, 30*time.Second, "configmap one gone from the syncer's view", func(ctx context.Context) (bool, error) {
		got, err := listed(ctx)
		return err == nil && len(got) == 0, err
	})
	if upstream, err := kube(t, s, app).CoreV1().ConfigMaps("web").Get(t.Context(), "one", metav1.GetOptions{}); err != nil || len(upstream.Labels) != 0 {
		t.Errorf("upstream configmap one at the end: %v %v", err, upstream.GetLabels())
	}
}

// TestComputeDefaults: a workspace with SyncTargets gets the Location
// "default" of all of them; a workspace that binds a compute service's
// export (and Placements) gets the Placement "default" of all its
// namespaces onto that workspace's Locations, once: its binding is marked
// workload.kcp.io/skip-default-object-creation, so a deleted default
// Placement stays deleted.
func TestComputeDefaults(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} })
	waitComputeExports(t, s)
	compute, identity := waitComputeBattery(t, s)
	bindRoot(t, s, compute, "workload.kcp.io", "scheduling.kcp.io")
	applyEventually(t, s, compute, "apiVersion: workload.kcp.io/v1alpha1\nkind: SyncTarget\nmetadata:\n  name: kind\nspec:\n  supportedAPIExports:\n  - export: kubernetes\n")
	reportKubernetesSynced(t, s, compute, "kind", identity)
	startHeartbeats(t, s, compute, "kind")
	eventually(t, 30*time.Second, "the default Location with the SyncTarget", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(compute, "get", "location", "default", "-o", "jsonpath={.status.instances}/{.status.availableInstances}")
		return err == nil && out == "1/1", nil
	})

	app := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "app", nil).Spec.Cluster)
	createBinding(t, s, app, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	createBinding(t, s, app, "kubernetes", "root:compute", "kubernetes")
	key := workloadv1alpha1.ToSyncTargetKey(compute.String(), "kind")
	eventually(t, 30*time.Second, "the default Placement, Bound, and namespace default synced", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(app, "get", "placement", "default", "-o", "jsonpath={.spec.locationWorkspace} {.status.phase}")
		if err != nil || out != "root:compute Bound" {
			return false, nil
		}
		ns, err := kube(t, s, app).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil && ns.Labels["state.workload.kcp.io/"+key] == "Sync", err
	})
	eventually(t, 30*time.Second, "the binding marked", func(ctx context.Context) (bool, error) {
		b, err := kcpClient(t, s, app).APIBindings().Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil && b.Annotations["workload.kcp.io/skip-default-object-creation"] == "true", err
	})
	s.MustKubectl(t, app, "delete", "placement", "default")
	time.Sleep(3 * time.Second)
	if out, err := s.Kubectl(app, "get", "placements", "-o", "name"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("placements after deleting the default one: %v %q", err, out)
	}
}

// euPlacement is a user workspace's Placement of its namespace web onto
// the Location eu of root:compute (euComputeObjects).
const euPlacement = `apiVersion: scheduling.kcp.io/v1alpha1
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
`

// waitPlacementBound waits until the Placement eu of cluster on s is Bound
// to root:compute's Location eu with a SyncTarget, and returns that
// SyncTarget's key.
func waitPlacementBound(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) string {
	t.Helper()
	var key string
	eventually(t, 30*time.Second, "the Placement eu Bound to root:compute's eu with a SyncTarget", func(ctx context.Context) (bool, error) {
		p, err := dynamicClient(t, s, cluster).Resource(placementsGVR).Get(ctx, "eu", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		loc, _, _ := unstructured.NestedStringMap(p.Object, "status", "selectedLocation")
		key = p.GetAnnotations()["internal.workload.kcp.io/synctarget"]
		return phase == "Bound" && loc["path"] == "root:compute" && loc["locationName"] == "eu" && key != "", nil
	})
	return key
}

// createSyncTarget creates the SyncTarget name supporting root:compute's
// export kubernetes in cluster, and gives the user syncer the rights that
// kubectl kcp workload sync gives its syncer; it returns the SyncTarget's
// UID.
func createSyncTarget(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, name, syncer string) string {
	t.Helper()
	applyEventually(t, s, cluster, fmt.Sprintf(`apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: %[1]s
spec:
  supportedAPIExports:
  - export: kubernetes
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: sync-%[1]s
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sync-%[1]s}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: %[2]s}
`, name, syncer))
	if _, err := kube(t, s, cluster).RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "sync-" + name}, Rules: workload.WorkspaceRules(name),
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := dynamicClient(t, s, cluster).Resource(syncTargetsGVR).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(st.GetUID())
}
