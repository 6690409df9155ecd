package syncere2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/syncer"
	"github.com/tessera-dev/tessera/test/e2e/framework"
	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
	"github.com/tessera-dev/tessera/test/e2e/framework/process"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	syncTargets = workloadv1alpha1.SchemeGroupVersion.WithResource("synctargets")
	pvcs        = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvs         = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
)

// site is a physical cluster with its SyncTarget and syncer process.
type site struct {
	name     string // the SyncTarget's, p1 or p2
	region   string
	pc       *physical.Cluster
	down     dynamic.Interface
	key      string
	args     []string
	syncer   *process.Process
	manifest string
}

const image = "registry.k8s.io/pause:3.10"

var _ = Describe("tessera-syncer", Ordered, Label("syncer"), func() {
	var (
		t       *framework.Tessera
		ws      *framework.WS
		compute string // the logical cluster of root:compute
		sites   []*site
		up      func(cluster string) dynamic.Interface
	)

	eventually := func(ctx context.Context, f func(Gomega), timeout time.Duration) {
		GinkgoHelper()
		Eventually(f).WithContext(ctx).WithTimeout(timeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	}
	kubectl := func(ctx context.Context, args ...string) string {
		GinkgoHelper()
		out, err := ws.Kubectl(ctx, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	startSyncer := func(s *site) {
		GinkgoHelper()
		bin, err := framework.BinDir()
		Expect(err).NotTo(HaveOccurred())
		s.syncer, err = env.Group().Start(process.Spec{Name: "syncer-" + s.name, Path: filepath.Join(bin, "tessera-syncer"), Args: s.args, CleanExit: true})
		Expect(err).NotTo(HaveOccurred())
	}
	siteOf := func(key string) *site {
		for _, s := range sites {
			if s.key == key {
				return s
			}
		}
		return nil
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		t, err = env.Tessera(ctx)
		Expect(err).NotTo(HaveOccurred())
		if t.Process == nil {
			Skip("the syncer suite starts its own Tessera with the compute battery")
		}
		up = func(cluster string) dynamic.Interface {
			d, err := t.Dynamic(cluster)
			Expect(err).NotTo(HaveOccurred())
			return d
		}
		pcs, err := env.PhysicalClusters(ctx, 2)
		Expect(err).NotTo(HaveOccurred())
		ws, err = t.AdminWS("syncer")
		Expect(err).NotTo(HaveOccurred())

		By("waiting for root:compute, which the battery creates")
		eventually(ctx, func(g Gomega) {
			out, err := ws.Kubectl(ctx, "get", "apiexport", "kubernetes", "--server", t.ClusterURL("root:compute"), "-o", "jsonpath={.status.identityHash}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).NotTo(BeEmpty())
		}, time.Minute)
		kubectl(ctx, "ws", "root:compute")
		kubectl(ctx, "kcp", "bind", "apiexport", "root:scheduling.kcp.io")
		lc, err := up("root:compute").Resource(schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}).Get(ctx, "cluster", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		compute = lc.GetAnnotations()["kcp.io/cluster"]
		Expect(compute).NotTo(BeEmpty())

		for i, pc := range pcs {
			s := &site{name: fmt.Sprintf("p%d", i+1), region: fmt.Sprintf("r%d", i+1), pc: pc}
			sites = append(sites, s)
			cfg, err := pc.Config()
			Expect(err).NotTo(HaveOccurred())
			s.down, err = dynamic.NewForConfig(cfg)
			Expect(err).NotTo(HaveOccurred())

			By("kubectl kcp workload sync " + s.name)
			s.manifest = filepath.Join(env.Dir, "syncer-"+s.name+".yaml")
			eventually(ctx, func(g Gomega) {
				_, err := ws.Kubectl(ctx, "kcp", "workload", "sync", s.name, "--syncer-image", "tessera-syncer:e2e", "-o", s.manifest)
				g.Expect(err).NotTo(HaveOccurred())
			}, time.Minute)
			kubectl(ctx, "label", "synctarget", s.name, "region="+s.region, "--overwrite")
			s.key = workloadv1alpha1.ToSyncTargetKey(compute, s.name)

			By("applying the manifest to physical cluster " + pc.Name)
			_, err = env.Kubectl(ctx, pc.Kubeconfig, "apply", "-f", s.manifest)
			Expect(err).NotTo(HaveOccurred())
			s.args = syncerArgs(ctx, s)
			startSyncer(s)
		}

		By("Locations per region and one for all")
		manifest := filepath.Join(env.Dir, "locations.yaml")
		var b strings.Builder
		for _, s := range sites {
			fmt.Fprintf(&b, "apiVersion: scheduling.kcp.io/v1alpha1\nkind: Location\nmetadata:\n  name: %s\n  labels: {region: %s}\nspec:\n  resource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}\n  instanceSelector:\n    matchLabels: {region: %s}\n---\n", s.region, s.region, s.region)
		}
		Expect(os.WriteFile(manifest, []byte(b.String()), 0o600)).To(Succeed())
		eventually(ctx, func(g Gomega) {
			_, err := ws.Kubectl(ctx, "apply", "-f", manifest)
			g.Expect(err).NotTo(HaveOccurred())
		}, time.Minute)

		for _, s := range sites {
			By("waiting for SyncTarget " + s.name + " to be Ready")
			_, err := ws.Kubectl(ctx, "wait", "--for=condition=Ready", "synctarget/"+s.name, "--timeout=90s")
			Expect(err).NotTo(HaveOccurred())
		}
	})

	// The syncers go before the physical clusters do (AfterSuite), whose
	// API servers would otherwise wait for the syncers' watches to end.
	AfterAll(func() {
		for _, s := range sites {
			if s.syncer != nil && s.syncer.Running() {
				Expect(s.syncer.Stop(10 * time.Second)).To(Succeed())
			}
		}
	})

	// downstreamObjects lists the objects of a resource the syncer of s
	// made, by upstream cluster|namespace/name.
	downstreamObjects := func(ctx context.Context, g Gomega, s *site, gvr schema.GroupVersionResource) map[string]*unstructured.Unstructured {
		nss, err := s.down.Resource(namespaces).List(ctx, metav1.ListOptions{LabelSelector: workloadv1alpha1.InternalDownstreamClusterLabel + "=" + s.key})
		g.Expect(err).NotTo(HaveOccurred())
		locators := map[string]syncer.NamespaceLocator{}
		for _, ns := range nss.Items {
			if l, ok := syncer.LocatorOf(ns.GetAnnotations()); ok {
				locators[ns.GetName()] = l
			}
		}
		list, err := s.down.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: workloadv1alpha1.InternalDownstreamClusterLabel + "=" + s.key})
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]*unstructured.Unstructured{}
		for i := range list.Items {
			o := &list.Items[i]
			l, ok := locators[o.GetNamespace()]
			g.Expect(ok).To(BeTrue(), "downstream %s %s/%s is in a namespace without a locator", gvr.Resource, o.GetNamespace(), o.GetName())
			out[l.Cluster+"|"+l.Namespace+"/"+o.GetName()] = o
		}
		return out
	}

	// newApp creates a workspace under root bound to compute with a
	// Placement for the Location selector given, and returns its
	// logical cluster.
	newApp := func(ctx context.Context, name, locationSelector string) string {
		GinkgoHelper()
		kubectl(ctx, "ws", "root")
		kubectl(ctx, "ws", "create", name, "--enter")
		args := []string{"kcp", "bind", "compute", "root:compute"}
		if locationSelector != "" {
			args = append(args, "--location-selectors="+locationSelector)
		}
		kubectl(ctx, args...)
		lc, err := up("root:"+name).Resource(schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}).Get(ctx, "cluster", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		return lc.GetAnnotations()["kcp.io/cluster"]
	}

	// applyClaim applies a claim of storage class manual in the current
	// workspace (logical cluster) and returns the downstream namespace it
	// is synced into on s.
	applyClaim := func(ctx context.Context, s *site, cluster, name, accessMode string) string {
		GinkgoHelper()
		manifest := filepath.Join(env.Dir, "pvc-"+name+".yaml")
		Expect(os.WriteFile(manifest, []byte(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
spec:
  accessModes: [%s]
  storageClassName: manual
  resources: {requests: {storage: 1Gi}}
`, name, accessMode)), 0o600)).To(Succeed())
		eventually(ctx, func(g Gomega) {
			_, err := ws.Kubectl(ctx, "apply", "-f", manifest)
			g.Expect(err).NotTo(HaveOccurred())
		}, time.Minute)
		var downNS string
		eventually(ctx, func(g Gomega) {
			got := downstreamObjects(ctx, g, s, pvcs)
			g.Expect(got).To(HaveKey(cluster + "|default/" + name))
			downNS = got[cluster+"|default/"+name].GetNamespace()
		}, time.Minute)
		return downNS
	}
	// provisionedVolume is a hostPath volume of 1Gi made for the claim
	// namespace/claim of a physical cluster, as a provisioner makes it.
	provisionedVolume := func(name, accessMode, path, namespace, claim string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{accessMode},
				"storageClassName": "manual", "persistentVolumeReclaimPolicy": "Retain", "hostPath": map[string]any{"path": path},
				"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": namespace, "name": claim}}}}
	}

	var app string

	It("runs a Deployment of a workspace on the physical cluster its Placement chose, with the status back", func(ctx SpecContext) {
		app = newApp(ctx, "app", "region=r1")
		eventually(ctx, func(g Gomega) {
			_, err := ws.Kubectl(ctx, "create", "deployment", "kuard", "--image="+image)
			g.Expect(err).NotTo(HaveOccurred())
		}, time.Minute)

		By("the Deployment runs on p1 (real controllers, kwok's node) and its status comes back")
		eventually(ctx, func(g Gomega) {
			out, err := ws.Kubectl(ctx, "get", "deployments")
			g.Expect(err).NotTo(HaveOccurred())
			lines := strings.Split(strings.TrimSpace(out), "\n")
			g.Expect(lines).To(HaveLen(2))
			g.Expect(strings.Fields(lines[0])).To(Equal([]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}))
			g.Expect(strings.Fields(lines[1])[:4]).To(Equal([]string{"kuard", "1/1", "1", "1"}))
		}, 2*time.Minute)
		got := downstreamObjects(ctx, Default, sites[0], deployments)
		Expect(got).To(HaveKey(app + "|default/kuard"))
		Expect(downstreamObjects(ctx, Default, sites[1], deployments)).To(BeEmpty())
		out := kubectl(ctx, "get", "deployment", "kuard", "-o", "jsonpath={.metadata.finalizers}")
		Expect(out).To(ContainSubstring("workload.kcp.io/syncer-" + sites[0].key))
	})

	It("moves the workloads when the workspace is placed in another Location", func(ctx SpecContext) {
		kubectl(ctx, "ws", "root:app")
		old := kubectl(ctx, "get", "placements", "-o", "jsonpath={.items[*].metadata.name}")
		manifest := filepath.Join(env.Dir, "placement-r2.yaml")
		Expect(os.WriteFile(manifest, []byte(`apiVersion: scheduling.kcp.io/v1alpha1
kind: Placement
metadata:
  name: r2
spec:
  locationSelectors: [{matchLabels: {region: r2}}]
  namespaceSelector: {}
  locationResource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  locationWorkspace: root:compute
`), 0o600)).To(Succeed())
		kubectl(ctx, "apply", "-f", manifest)
		eventually(ctx, func(g Gomega) {
			out, err := ws.Kubectl(ctx, "get", "placement", "r2", "-o", "jsonpath={.status.phase}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).NotTo(Equal("Pending"))
		}, time.Minute)
		kubectl(ctx, "delete", "placement", old)

		eventually(ctx, func(g Gomega) {
			g.Expect(downstreamObjects(ctx, g, sites[1], deployments)).To(HaveKey(app + "|default/kuard"))
			g.Expect(downstreamObjects(ctx, g, sites[0], deployments)).To(BeEmpty())
			out, err := ws.Kubectl(ctx, "get", "deployment", "kuard", "-o", "jsonpath={.metadata.finalizers}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(ContainSubstring("workload.kcp.io/syncer-" + sites[1].key))
			g.Expect(out).NotTo(ContainSubstring("workload.kcp.io/syncer-" + sites[0].key))
		}, 2*time.Minute)
	})

	It("deletes the downstream copy before the object goes", func(ctx SpecContext) {
		kubectl(ctx, "ws", "root:app")
		kubectl(ctx, "delete", "deployment", "kuard", "--wait=false")
		eventually(ctx, func(g Gomega) {
			g.Expect(downstreamObjects(ctx, g, sites[1], deployments)).To(BeEmpty())
			_, err := up(app).Resource(deployments).Namespace("default").Get(ctx, "kuard", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the upstream Deployment: %v", err)
		}, time.Minute)
	})

	It("loses and duplicates nothing when the syncer is killed and restarted", func(ctx SpecContext) {
		s := sites[1]
		cms := up(app).Resource(configMaps).Namespace("default")
		for i := range 3 {
			_, err := cms.Create(ctx, configMap(fmt.Sprintf("before-%d", i), "1"), metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		eventually(ctx, func(g Gomega) {
			g.Expect(downstreamObjects(ctx, g, s, configMaps)).To(HaveKey(app + "|default/before-2"))
		}, time.Minute)

		By("SIGKILL, then changes upstream while the syncer is away")
		s.syncer.Kill()
		Expect(cms.Delete(ctx, "before-0", metav1.DeleteOptions{})).To(Succeed())
		_, err := cms.Patch(ctx, "before-1", types.MergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		for i := range 3 {
			_, err := cms.Create(ctx, configMap(fmt.Sprintf("during-%d", i), "1"), metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		startSyncer(s)
		eventually(ctx, func(g Gomega) {
			got := downstreamObjects(ctx, g, s, configMaps)
			var names []string
			for k, o := range got {
				if strings.HasPrefix(k, app+"|default/") {
					names = append(names, o.GetName())
				}
			}
			slices.Sort(names)
			g.Expect(names).To(Equal([]string{"before-1", "before-2", "during-0", "during-1", "during-2"}))
			g.Expect(got[app+"|default/before-1"].Object["data"]).To(HaveKeyWithValue("v", "2"))
			_, err := cms.Get(ctx, "before-0", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		}, time.Minute)
	})

	It("brings the volume of a synced claim up into the workspace, bound to the claim", func(ctx SpecContext) {
		s := sites[1] // root:app runs on p2 since the move
		kubectl(ctx, "ws", "root:app")
		downNS := applyClaim(ctx, s, app, "data", "ReadWriteOnce")

		By("a volume made for the claim in the physical cluster, as a provisioner would")
		pv := provisionedVolume("pv-data-"+env.RunID, "ReadWriteOnce", "/tmp/e2e-data", downNS, "data")
		_, err := s.down.Resource(pvs).Create(ctx, pv, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("the workspace has the volume, bound to its claim, and the claim is Bound")
		eventually(ctx, func(g Gomega) {
			up, err := up(app).Resource(pvs).Get(ctx, pv.GetName(), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			ns, _, _ := unstructured.NestedString(up.Object, "spec", "claimRef", "namespace")
			name, _, _ := unstructured.NestedString(up.Object, "spec", "claimRef", "name")
			phase, _, _ := unstructured.NestedString(up.Object, "status", "phase")
			g.Expect([]string{ns, name, phase}).To(Equal([]string{"default", "data", "Bound"}))
			// Bound, it is switched from Upsync to Sync (the volume
			// coordination) and synced from the workspace from then on.
			g.Expect(up.GetLabels()).To(HaveKeyWithValue(workloadv1alpha1.ClusterResourceStateLabelPrefix+s.key, "Sync"))
			out, err := ws.Kubectl(ctx, "get", "pvc", "data", "-o", "jsonpath={.status.phase}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(Equal("Bound"))
		}, 2*time.Minute)

		By("the claim deleted: the volume (Retain) leaves the physical cluster, its storage kept, and stays Released in the workspace")
		kubectl(ctx, "delete", "pvc", "data", "--wait=false")
		eventually(ctx, func(g Gomega) {
			u, err := up(app).Resource(pvs).Get(ctx, pv.GetName(), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			g.Expect(phase).To(Equal("Released"))
			_, err = s.down.Resource(pvs).Get(ctx, pv.GetName(), metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the volume downstream: %v", err)
		}, 2*time.Minute)
		By("cleaned up by hand, as a Retain volume is")
		Expect(up(app).Resource(pvs).Delete(ctx, pv.GetName(), metav1.DeleteOptions{})).To(Succeed())
	})

	It("moves a volume with its claim to the other physical cluster, keeping its storage", func(ctx SpecContext) {
		// A workspace of its own, on p2, later placed on p1.
		vol := newApp(ctx, "vol", "region=r2")
		from, to := sites[1], sites[0]
		fromNS := applyClaim(ctx, from, vol, "shared", "ReadWriteMany")

		By("a volume provisioned for the claim on p2, bound by p2's volume controller")
		name := "pv-shared-" + env.RunID
		pv := provisionedVolume(name, "ReadWriteMany", "/tmp/e2e-shared", fromNS, "shared")
		_, err := from.down.Resource(pvs).Create(ctx, pv, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("upsynced, then switched to Sync for p2: same volume there, Retain, its claim still Bound")
		eventually(ctx, func(g Gomega) {
			u, err := up(vol).Resource(pvs).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(u.GetLabels()).To(HaveKeyWithValue(workloadv1alpha1.ClusterResourceStateLabelPrefix+from.key, "Sync"))
			g.Expect(u.GetAnnotations()).To(HaveKeyWithValue(workloadv1alpha1.VolumeProvisionedByAnnotationKey, from.key))
			d, err := from.down.Resource(pvs).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.GetLabels()).To(HaveKeyWithValue(workloadv1alpha1.InternalDownstreamClusterLabel, from.key))
			phase, _, _ := unstructured.NestedString(d.Object, "status", "phase")
			g.Expect(phase).To(Equal("Bound"))
			c, err := from.down.Resource(pvcs).Namespace(fromNS).Get(ctx, "shared", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			phase, _, _ = unstructured.NestedString(c.Object, "status", "phase")
			g.Expect(phase).To(Equal("Bound"))
		}, 2*time.Minute)

		By("the workspace placed on p1 instead")
		old := kubectl(ctx, "get", "placements", "-o", "jsonpath={.items[*].metadata.name}")
		placement := filepath.Join(env.Dir, "placement-vol-r1.yaml")
		Expect(os.WriteFile(placement, []byte(`apiVersion: scheduling.kcp.io/v1alpha1
kind: Placement
metadata:
  name: r1
spec:
  locationSelectors: [{matchLabels: {region: r1}}]
  namespaceSelector: {}
  locationResource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  locationWorkspace: root:compute
`), 0o600)).To(Succeed())
		kubectl(ctx, "apply", "-f", placement)
		eventually(ctx, func(g Gomega) {
			out, err := ws.Kubectl(ctx, "get", "placement", "r1", "-o", "jsonpath={.status.phase}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).NotTo(Equal("Pending"))
		}, time.Minute)
		kubectl(ctx, "delete", "placement", old)

		By("on p1 the claim is Bound, by p1's volume controller, to the same storage; p2 let go of both")
		st, err := up(compute).Resource(syncTargets).Get(ctx, to.name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		toName := syncer.DownstreamVolumeName(syncer.SyncTargetLocator{Cluster: compute, Name: to.name, UID: st.GetUID()}, vol, name)
		eventually(ctx, func(g Gomega) {
			claims := downstreamObjects(ctx, g, to, pvcs)
			g.Expect(claims).To(HaveKey(vol + "|default/shared"))
			c := claims[vol+"|default/shared"]
			volumeName, _, _ := unstructured.NestedString(c.Object, "spec", "volumeName")
			phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
			g.Expect([]string{volumeName, phase}).To(Equal([]string{toName, "Bound"}))
			d, err := to.down.Resource(pvs).Get(ctx, toName, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			path, _, _ := unstructured.NestedString(d.Object, "spec", "hostPath", "path")
			policy, _, _ := unstructured.NestedString(d.Object, "spec", "persistentVolumeReclaimPolicy")
			g.Expect([]string{path, policy}).To(Equal([]string{"/tmp/e2e-shared", "Retain"}))
			g.Expect(downstreamObjects(ctx, g, from, pvcs)).NotTo(HaveKey(vol + "|default/shared"))
			_, err = from.down.Resource(pvs).Get(ctx, name, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the volume on p2: %v", err)
		}, 2*time.Minute)

		By("the claim deleted: the volume is Retain, so it stays in the workspace, Released, and leaves p1")
		kubectl(ctx, "delete", "pvc", "shared", "--wait=false")
		eventually(ctx, func(g Gomega) {
			u, err := up(vol).Resource(pvs).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			g.Expect(phase).To(Equal("Released"))
			g.Expect(u.GetFinalizers()).To(BeEmpty())
			_, err = to.down.Resource(pvs).Get(ctx, toName, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the volume on p1: %v", err)
		}, 2*time.Minute)
	})

	It("keeps the invariants after 500 random operations", func(ctx SpecContext) {
		// Namespaces labelled group=a go to r1, group=b to r2; operations
		// create, update and delete ConfigMaps and Deployments and move
		// namespaces between the groups.
		inv := newApp(ctx, "inv", "")
		kubectl(ctx, "ws", "root:inv")
		for _, p := range strings.Fields(kubectl(ctx, "get", "placements", "-o", "jsonpath={.items[*].metadata.name}")) {
			kubectl(ctx, "delete", "placement", p)
		}
		var b strings.Builder
		for _, g := range []struct{ name, region string }{{"a", "r1"}, {"b", "r2"}} {
			fmt.Fprintf(&b, "apiVersion: scheduling.kcp.io/v1alpha1\nkind: Placement\nmetadata:\n  name: group-%s\nspec:\n  locationSelectors: [{matchLabels: {region: %s}}]\n  namespaceSelector: {matchLabels: {group: %s}}\n  locationResource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}\n  locationWorkspace: root:compute\n---\n", g.name, g.region, g.name)
		}
		manifest := filepath.Join(env.Dir, "placements-inv.yaml")
		Expect(os.WriteFile(manifest, []byte(b.String()), 0o600)).To(Succeed())
		kubectl(ctx, "apply", "-f", manifest)
		client := up(inv)
		nsNames := []string{"n0", "n1", "n2", "n3"}
		for i, n := range nsNames {
			ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
				"name": n, "labels": map[string]any{"group": []string{"a", "b"}[i%2]}}}}
			_, err := client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}

		rng := rand.New(rand.NewPCG(42, uint64(GinkgoRandomSeed())))
		var failures []string
		for op := range 500 {
			n := nsNames[rng.IntN(len(nsNames))]
			name := fmt.Sprintf("o%d", rng.IntN(12))
			var err error
			switch k := rng.IntN(10); {
			case k < 4:
				_, err = client.Resource(configMaps).Namespace(n).Apply(ctx, name, configMap(name, fmt.Sprint(op)), metav1.ApplyOptions{FieldManager: "e2e", Force: true})
			case k < 6:
				_, err = client.Resource(deployments).Namespace(n).Apply(ctx, name, deployment(name, int64(1+rng.IntN(3))), metav1.ApplyOptions{FieldManager: "e2e", Force: true})
			case k < 8:
				gvr := []schema.GroupVersionResource{configMaps, deployments}[rng.IntN(2)]
				err = client.Resource(gvr).Namespace(n).Delete(ctx, name, metav1.DeleteOptions{})
			default:
				_, err = client.Resource(namespaces).Patch(ctx, n, types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{"group":%q}}}`, []string{"a", "b"}[rng.IntN(2)])), metav1.PatchOptions{})
			}
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				failures = append(failures, fmt.Sprintf("op %d: %v", op, err))
			}
		}
		Expect(failures).To(BeEmpty())

		By("every object scheduled to a SyncTarget is on its cluster as it is upstream, and nothing else is")
		eventually(ctx, func(g Gomega) {
			for _, gvr := range []schema.GroupVersionResource{configMaps, deployments} {
				want := map[*site]map[string]*unstructured.Unstructured{}
				for _, s := range sites {
					want[s] = map[string]*unstructured.Unstructured{}
				}
				for _, n := range nsNames {
					ns, err := client.Resource(namespaces).Get(ctx, n, metav1.GetOptions{})
					g.Expect(err).NotTo(HaveOccurred())
					list, err := client.Resource(gvr).Namespace(n).List(ctx, metav1.ListOptions{})
					g.Expect(err).NotTo(HaveOccurred())
					for _, s := range sites {
						if ns.GetLabels()[workloadv1alpha1.ClusterResourceStateLabelPrefix+s.key] != string(workloadv1alpha1.ResourceStateSync) {
							continue
						}
						if _, leaving := ns.GetAnnotations()[workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix+s.key]; leaving {
							continue
						}
						for i := range list.Items {
							if list.Items[i].GetDeletionTimestamp() == nil {
								want[s][inv+"|"+n+"/"+list.Items[i].GetName()] = &list.Items[i]
							}
						}
					}
				}
				for _, s := range sites {
					got := downstreamObjects(ctx, g, s, gvr)
					for k := range got {
						if !strings.HasPrefix(k, inv+"|") {
							delete(got, k)
						}
					}
					g.Expect(keys(got)).To(Equal(keys(want[s])), "%s on %s", gvr.Resource, s.name)
					for k, u := range want[s] {
						switch gvr {
						case configMaps:
							g.Expect(got[k].Object["data"]).To(Equal(u.Object["data"]), "%s %s on %s", gvr.Resource, k, s.name)
						case deployments:
							r1, _, _ := unstructured.NestedInt64(got[k].Object, "spec", "replicas")
							r2, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
							g.Expect(r1).To(Equal(r2), "%s %s replicas on %s", gvr.Resource, k, s.name)
						}
					}
				}
			}
		}, 3*time.Minute)
	})

	It("moves the workloads of a physical cluster that stops to another one", func(ctx SpecContext) {
		// A workspace placed by region label r*, in a Location of both.
		manifest := filepath.Join(env.Dir, "location-all.yaml")
		Expect(os.WriteFile(manifest, []byte(`apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: all
  labels: {region: all}
spec:
  resource: {group: workload.kcp.io, version: v1alpha1, resource: synctargets}
  instanceSelector: {}
`), 0o600)).To(Succeed())
		kubectl(ctx, "ws", "root:compute")
		kubectl(ctx, "apply", "-f", manifest)
		ha := newApp(ctx, "ha", "region=all")
		kubectl(ctx, "ws", "root:ha")
		eventually(ctx, func(g Gomega) {
			_, err := ws.Kubectl(ctx, "create", "deployment", "web", "--image="+image)
			g.Expect(err).NotTo(HaveOccurred())
		}, time.Minute)
		var first *site
		eventually(ctx, func(g Gomega) {
			ns, err := up(ha).Resource(namespaces).Get(ctx, "default", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			for k, v := range ns.GetLabels() {
				if key, ok := strings.CutPrefix(k, workloadv1alpha1.ClusterResourceStateLabelPrefix); ok && v == "Sync" {
					first = siteOf(key)
				}
			}
			g.Expect(first).NotTo(BeNil())
			g.Expect(downstreamObjects(ctx, g, first, deployments)).To(HaveKey(ha + "|default/web"))
		}, time.Minute)

		By("stopping physical cluster " + first.pc.Name + " with its syncer")
		first.syncer.Kill()
		provider, err := env.PhysicalProvider()
		Expect(err).NotTo(HaveOccurred())
		Expect(provider.Delete(ctx, first.pc)).To(Succeed())
		kubectl(ctx, "ws", "root:compute")
		eventually(ctx, func(g Gomega) {
			out, err := ws.Kubectl(ctx, "get", "synctarget", first.name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(Equal("False"))
		}, time.Minute)
		var other *site
		for _, s := range sites {
			if s != first {
				other = s
			}
		}
		By("the workload runs on " + other.name + " now")
		eventually(ctx, func(g Gomega) {
			g.Expect(downstreamObjects(ctx, g, other, deployments)).To(HaveKey(ha + "|default/web"))
			d, err := up(ha).Resource(deployments).Namespace("default").Get(ctx, "web", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
			g.Expect(ready).To(Equal(int64(1)))
		}, 2*time.Minute)
	})
})

func keys(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func configMap(name, v string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name}, "data": map[string]any{"v": v}}}
}

func deployment(name string, replicas int64) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}}}}}}
}

// syncerArgs reads the manifest kubectl kcp workload sync wrote: the
// syncer Deployment's arguments, with the upstream kubeconfig of its
// Secret written to a file, and a downstream kubeconfig with the token of
// the syncer's service account in the physical cluster (filled by the
// cluster's token controller), so that the syncer runs with exactly the
// rights the manifest grants it.
func syncerArgs(ctx context.Context, s *site) []string {
	GinkgoHelper()
	data, err := os.ReadFile(s.manifest)
	Expect(err).NotTo(HaveOccurred())
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	var args []string
	var namespace, kubeconfig, saName string
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			Expect(containers).To(HaveLen(1))
			for _, a := range containers[0].(map[string]any)["args"].([]any) {
				args = append(args, a.(string))
			}
			namespace = o.GetNamespace()
			saName, _, _ = unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
		case "Secret":
			if v, ok, _ := unstructured.NestedString(o.Object, "stringData", "kubeconfig"); ok {
				kubeconfig = v
			} else if v, ok, _ := unstructured.NestedString(o.Object, "data", "kubeconfig"); ok {
				b, err := base64.StdEncoding.DecodeString(v)
				Expect(err).NotTo(HaveOccurred())
				kubeconfig = string(b)
			}
		}
	}
	Expect(args).NotTo(BeEmpty(), "the syncer Deployment's args")
	Expect(kubeconfig).NotTo(BeEmpty(), "the Secret with the upstream kubeconfig")
	from := filepath.Join(env.Dir, "from-"+s.name+".kubeconfig")
	Expect(os.WriteFile(from, []byte(kubeconfig), 0o600)).To(Succeed())

	// The physical cluster's token for the syncer's service account.
	var token string
	Eventually(func(g Gomega) {
		secrets, err := s.down.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(namespace).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, sec := range secrets.Items {
			if sec.Object["type"] == "kubernetes.io/service-account-token" && sec.GetAnnotations()["kubernetes.io/service-account.name"] == saName {
				v, _, _ := unstructured.NestedString(sec.Object, "data", "token")
				b, _ := base64.StdEncoding.DecodeString(v)
				token = string(b)
			}
		}
		g.Expect(token).NotTo(BeEmpty(), "a token for service account %s/%s", namespace, saName)
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	pcCfg, err := clientcmd.LoadFromFile(s.pc.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	pcCtx := pcCfg.Contexts[pcCfg.CurrentContext]
	cluster := pcCfg.Clusters[pcCtx.Cluster]
	ca := cluster.CertificateAuthorityData
	if len(ca) == 0 && cluster.CertificateAuthority != "" {
		ca, err = os.ReadFile(cluster.CertificateAuthority)
		Expect(err).NotTo(HaveOccurred())
	}
	to := clientcmdapi.NewConfig()
	to.Clusters["p"] = &clientcmdapi.Cluster{Server: cluster.Server, CertificateAuthorityData: ca}
	to.AuthInfos["syncer"] = &clientcmdapi.AuthInfo{Token: token}
	to.Contexts["p"] = &clientcmdapi.Context{Cluster: "p", AuthInfo: "syncer"}
	to.CurrentContext = "p"
	toPath := filepath.Join(env.Dir, "to-"+s.name+".kubeconfig")
	Expect(clientcmd.WriteToFile(*to, toPath)).To(Succeed())

	for i, a := range args {
		if strings.HasPrefix(a, "--from-kubeconfig=") {
			args[i] = "--from-kubeconfig=" + from
		}
	}
	return append(args, "--to-kubeconfig="+toPath, "--heartbeat-interval=2s", "--downstream-namespace-clean-delay=2s")
}
