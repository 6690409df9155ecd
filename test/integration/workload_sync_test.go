package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/cli/plugin"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestWorkloadSync plays the seed's "configure kcp to sync to your
// cluster" with the real kubectl and Tessera's plugins, on a shard with
// the battery root-compute-workspace: in root:compute, `kubectl kcp
// workload sync kind` binds root:workload.kcp.io (as in kcp, where the
// workspace would have it bound already), creates the SyncTarget, its syncer's service account, token, cluster role and
// binding, and writes the physical cluster's manifest. The kubeconfig in
// that manifest works: with it the syncer reads its SyncTarget, writes its
// status, and lists through its syncer virtual workspace, but not through
// another SyncTarget's. A second run updates, and cordon and uncordon
// switch spec.unschedulable.
func TestWorkloadSync(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} })
	waitComputeExports(t, s)
	plugins := wsPlugin(t)
	kcpPlugin(t, plugins)
	compute, _ := waitComputeBattery(t, s)
	w := newWSSession(t, s.Kubeconfig, plugins)
	w.must("ws", "root:compute")

	manifestFile := filepath.Join(t.TempDir(), "syncer-kind.yaml")
	args := []string{"kcp", "workload", "sync", "kind", "--syncer-image", "ghcr.io/tessera-dev/tessera-syncer:test", "-o", manifestFile,
		"--resources", "routes.route.openshift.io", "--qps", "5", "--burst", "9"}
	var out string
	out = w.must(args...)
	if !strings.Contains(out, `Binding APIExport "root:workload.kcp.io".`) || !strings.Contains(out, `Binding APIExport "root:scheduling.kcp.io" for the SyncTarget's Location.`) {
		t.Errorf("kubectl kcp workload sync in a workspace without SyncTargets:\n%s", out)
	}
	// The workspace serves Locations, so the shard gives the SyncTarget
	// its Location default, which kubectl kcp bind compute finds.
	eventually(t, 30*time.Second, "the default Location of the SyncTarget's workspace", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(compute, "get", "location", "default", "-o", "jsonpath={.status.instances}")
		return err == nil && out == "1", fmt.Errorf("%s", out)
	})

	sts := dynamicClient(t, s, compute).Resource(syncTargetsGVR)
	u, err := sts.Get(t.Context(), "kind", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := &workloadv1alpha1.SyncTarget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, st); err != nil {
		t.Fatal(err)
	}
	if got := st.Spec.SupportedAPIExports; len(got) != 1 || got[0].Path != "root:compute" || got[0].Export != "kubernetes" {
		t.Errorf("supportedAPIExports %+v", got)
	}
	uid := string(st.UID)
	id := "kcp-syncer-kind-" + plugin.ShortHash(uid)
	for _, want := range []string{
		`Creating synctarget "kind"`,
		`Creating service account "` + id + `"`,
		`Creating cluster role "` + id + `" to give service account "` + id + `"`,
		`Creating or updating cluster role binding "` + id + `"`,
		"Wrote physical cluster manifest to " + manifestFile + ` for namespace "` + id + `"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl kcp workload sync: want %q in\n%s", want, out)
		}
	}

	// The syncer's identity in the workspace.
	k := kube(t, s, compute)
	if _, err := k.CoreV1().ServiceAccounts("default").Get(t.Context(), id, metav1.GetOptions{}); err != nil {
		t.Errorf("service account: %v", err)
	}
	secret, err := k.CoreV1().Secrets("default").Get(t.Context(), id+"-token", metav1.GetOptions{})
	if err != nil || len(secret.Data["token"]) == 0 || secret.Type != corev1.SecretTypeServiceAccountToken {
		t.Fatalf("token secret: %v %v", err, secret)
	}
	token := string(secret.Data["token"])
	role, err := k.RbacV1().ClusterRoles().Get(t.Context(), id, metav1.GetOptions{})
	if err != nil || !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.Verbs, []string{"sync"}) && slices.Equal(r.ResourceNames, []string{"kind"})
	}) {
		t.Errorf("cluster role: %v %+v", err, role)
	}
	binding, err := k.RbacV1().ClusterRoleBindings().Get(t.Context(), id, metav1.GetOptions{})
	if err != nil || binding.RoleRef.Name != id || len(binding.Subjects) != 1 || binding.Subjects[0].Name != id || binding.Subjects[0].Namespace != "default" {
		t.Errorf("cluster role binding: %v %+v", err, binding)
	}

	// The manifest for the physical cluster.
	m := readManifest(t, manifestFile)
	d := m["Deployment/"+id].(*appsv1.Deployment)
	wantArgs := []string{
		"--from-kubeconfig=/kcp/kubeconfig", "--sync-target-name=kind", "--sync-target-uid=" + uid, "--from-cluster=" + compute.String(),
		"--qps=5", "--burst=9", "--downstream-namespace-clean-delay=30s", "--resources=routes.route.openshift.io",
	}
	if got := d.Spec.Template.Spec.Containers[0].Args; !slices.Equal(got, wantArgs) {
		t.Errorf("syncer args %q, want %q", got, wantArgs)
	}
	if d.Namespace != id || d.Spec.Template.Spec.Containers[0].Image != "ghcr.io/tessera-dev/tessera-syncer:test" {
		t.Errorf("deployment %s/%s image %q", d.Namespace, d.Name, d.Spec.Template.Spec.Containers[0].Image)
	}
	// The syncer may run the compute service's Deployments on the physical
	// cluster.
	if !slices.ContainsFunc(m["ClusterRole/"+id].(*rbacv1.ClusterRole).Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.APIGroups, []string{"apps"}) && slices.Contains(r.Resources, "deployments") && slices.Equal(r.Verbs, []string{"*"})
	}) {
		t.Errorf("the physical cluster role does not cover deployments: %+v", m["ClusterRole/"+id])
	}
	syncerKubeconfig := []byte(m["Secret/"+id].(*corev1.Secret).StringData["kubeconfig"])
	kc, err := clientcmd.Load(syncerKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if c := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]; c.Server != s.URL+"/clusters/root:compute" {
		t.Errorf("the syncer's server %q", c.Server)
	}
	if u := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]; u.Token != token {
		t.Error("the syncer's kubeconfig does not hold the service account's token")
	}

	// The syncer's kubeconfig works: it reads its SyncTarget and reports.
	syncer := syncerKubectl(t, syncerKubeconfig)
	if got, err := syncer("get", "synctarget", "kind", "-o", "jsonpath={.metadata.uid}"); err != nil || got != uid {
		t.Errorf("the syncer reading its SyncTarget: %v %q", err, got)
	}
	if got, err := syncer("get", "synctargets"); err == nil {
		t.Errorf("the syncer lists all SyncTargets:\n%s", got)
	}
	// It writes its status as a syncer does, by a patch (kubectl patch
	// --subresource=status would read the status first, which kcp's role
	// does not allow).
	syncerConfig, err := clientcmd.RESTConfigFromKubeConfig(syncerKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	syncerClient, err := dynamic.NewForConfig(syncerConfig)
	if err != nil {
		t.Fatal(err)
	}
	status := fmt.Sprintf(`{"status":{"lastSyncerHeartbeatTime":%q,"syncedResources":[{"resource":"configmaps","versions":["v1"],"identityHash":"","state":"Accepted"}]}}`, time.Now().UTC().Format(time.RFC3339))
	if _, err := syncerClient.Resource(syncTargetsGVR).Patch(t.Context(), "kind", types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("the syncer reporting its heartbeat and synced resources: %v", err)
	}
	applyEventually(t, s, compute, "apiVersion: workload.kcp.io/v1alpha1\nkind: SyncTarget\nmetadata:\n  name: other\n")
	kindURL, otherURL := syncerURL(t, sts, "kind"), syncerURL(t, sts, "other")
	if _, err := syncerVWClient(t, syncerKubeconfig, kindURL).Resource(configMapsGVR).List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("the syncer listing configmaps through its virtual workspace %s: %v", kindURL, err)
	}
	if _, err := syncerVWClient(t, syncerKubeconfig, otherURL).Resource(configMapsGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the syncer listing through another SyncTarget's virtual workspace: %v, want Forbidden", err)
	}

	// Again, with a label: the same objects, updated.
	out = w.must(append(args, "--labels", "region=eu")...)
	if strings.Contains(out, "Creating synctarget") || strings.Contains(out, "Creating service account") {
		t.Errorf("a second run created again:\n%s", out)
	}
	if got := w.must("get", "synctarget", "kind", "-o", "jsonpath={.metadata.uid} {.metadata.labels.region}"); got != uid+" eu" {
		t.Errorf("the SyncTarget after a second run: %q", got)
	}
	if again := readManifest(t, manifestFile); !bytes.Equal([]byte(again["Secret/"+id].(*corev1.Secret).StringData["kubeconfig"]), syncerKubeconfig) {
		t.Error("a second run wrote another kubeconfig")
	}

	unschedulable := func() string {
		return w.must("get", "synctarget", "kind", "-o", "jsonpath={.spec.unschedulable}")
	}
	w.expect([]string{"kcp", "workload", "cordon", "kind"}, "kind cordoned")
	if got := unschedulable(); got != "true" {
		t.Errorf("unschedulable after cordon: %q", got)
	}
	w.expect([]string{"kcp", "workload", "cordon", "kind"}, "kind already cordoned")
	w.expect([]string{"kcp", "workload", "drain", "kind"}, "kind draining")
	drained := w.must("get", "synctarget", "kind", "-o", "jsonpath={.spec.unschedulable} {.spec.evictAfter}")
	if at, err := time.Parse(time.RFC3339, strings.TrimPrefix(drained, "true ")); err != nil || time.Since(at) > time.Minute || time.Since(at) < -time.Second {
		t.Errorf("after drain: unschedulable and evictAfter %q, want true and now", drained)
	}
	w.expect([]string{"kcp", "workload", "drain", "kind"}, "kind already draining")
	w.expect([]string{"kcp", "workload", "uncordon", "kind"}, "kind uncordoned")
	if got := w.must("get", "synctarget", "kind", "-o", "jsonpath={.spec.unschedulable} {.spec.evictAfter}"); got != "false " {
		t.Errorf("unschedulable and evictAfter after uncordon: %q", got)
	}
	w.expect([]string{"kcp", "workload", "uncordon", "kind"}, "kind already uncordoned")
}

// readManifest decodes the manifest file into typed objects by
// <kind>/<name>.
func readManifest(t *testing.T, file string) map[string]runtime.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]runtime.Object{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---\n")) == "" {
			continue
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("decoding %s: %v", doc, err)
		}
		objs[gvk.Kind+"/"+obj.(metav1.Object).GetName()] = obj
	}
	return objs
}

// syncerKubectl returns a function that runs the real kubectl with the
// syncer's kubeconfig.
func syncerKubectl(t *testing.T, kubeconfig []byte) func(args ...string) (string, error) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(file, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, error) {
		cmd := exec.Command(framework.KubectlPath(t), append([]string{"--kubeconfig", file}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(dir, "cache"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// syncerURL waits until the SyncTarget name has the URL of its syncer
// virtual workspace and returns it.
func syncerURL(t *testing.T, sts dynamic.ResourceInterface, name string) string {
	t.Helper()
	var url string
	eventually(t, 30*time.Second, "the syncer virtual workspace URL of SyncTarget "+name, func(ctx context.Context) (bool, error) {
		u, err := sts.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st := &workloadv1alpha1.SyncTarget{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, st); err != nil {
			return false, err
		}
		if len(st.Status.VirtualWorkspaces) > 0 {
			url = st.Status.VirtualWorkspaces[0].SyncerURL
		}
		return url != "", nil
	})
	return url
}

// syncerVWClient is a client of all clusters of a syncer virtual
// workspace with the credentials and CA of the syncer's kubeconfig.
func syncerVWClient(t *testing.T, kubeconfig []byte, url string) dynamic.Interface {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = url + "/clusters/*"
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
