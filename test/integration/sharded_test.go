package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
	vwoptions "github.com/tessera-dev/tessera/virtual/options"
)

// createWorkspaceOn creates a Workspace in parent on shard s that must be
// scheduled onto the shard named shard, and waits until it is Ready.
func createWorkspaceOn(t *testing.T, s *framework.Shard, parent logicalcluster.Name, name, shard string) *tenancyv1alpha1.Workspace {
	t.Helper()
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenancyv1alpha1.WorkspaceSpec{Location: &tenancyv1alpha1.WorkspaceLocation{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": shard}},
		}},
	}
	if _, err := kcpClient(t, s, parent).Workspaces().Create(t.Context(), ws, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating workspace %s in %s: %v", name, parent, err)
	}
	got := waitWorkspaceReady(t, s, parent, name)
	if sh := got.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey]; sh != shard {
		t.Fatalf("workspace %s is on shard %q, want %s", name, sh, shard)
	}
	return got
}

// TestTwoShards: a root shard and shard-1 with one installation CA and the
// root shard's embedded cache. A workspace is scheduled onto shard-1 from
// root, its logical cluster lives there, an export published there is
// bound from a workspace on root and keeps serving while shard-1 is
// stopped, and deleting the workspace deletes its logical cluster on
// shard-1.
func TestTwoShards(t *testing.T) {
	caCert, caKey := framework.NewInstallationCA(t)
	root := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey), withTokens(t, "alice-token,alice,a1", "bob-token,bob,b1"))
	shard1 := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey), framework.JoiningRoot(root, "shard-1"),
		func(o *options.Options) { o.OrphanLogicalClusterSweepInterval = time.Second })
	ctx := t.Context()
	eventually(t, time.Minute, "shard-1 registered", func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, root, logicalcluster.Root).Shards().Get(ctx, "shard-1", metav1.GetOptions{})
		return err == nil, nil
	})

	provider := createWorkspaceOn(t, root, logicalcluster.Root, "provider", "shard-1")
	providerCluster := logicalcluster.Name(provider.Spec.Cluster)
	if _, err := kcpClient(t, shard1, providerCluster).LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the logical cluster of the workspace on shard-1: %v", err)
	}
	if !strings.Contains(provider.Spec.URL, shard1.URL+"/clusters/root:provider") {
		t.Errorf("spec.URL = %q, want shard-1's URL and the path", provider.Spec.URL)
	}

	// A workspace of the workspace on shard-1 is created there, by shard-1.
	createWorkspaceOn(t, shard1, providerCluster, "team", "root")

	// A WorkspaceType of a workspace on shard-1 is found by root through
	// its replica, for a workspace on root.
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "remote-kind"}}
	if _, err := kcpClient(t, shard1, providerCluster).WorkspaceTypes().Create(ctx, wt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	typed := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "typed"},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type:     &tenancyv1alpha1.WorkspaceTypeReference{Name: "remote-kind", Path: "root:provider"},
			Location: &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "root"}}},
		},
	}
	eventually(t, 30*time.Second, "a workspace of the type on shard-1 accepted on root", func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, root, logicalcluster.Root).Workspaces().Create(ctx, typed, metav1.CreateOptions{})
		return err == nil, nil
	})
	if ws := waitWorkspaceReady(t, root, logicalcluster.Root, "typed"); ws.Spec.Type.Path != "root:provider" {
		t.Errorf("the typed workspace's type is %v", ws.Spec.Type)
	}

	// Using that type needs "use" on it, decided on root by shard-1's
	// replicated RBAC: alice has it, bob has not; both administer root.
	createRole(t, shard1, providerCluster, "use-remote-kind", rbacv1.PolicyRule{
		APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{"remote-kind"}, Verbs: []string{"use"}})
	bindUser := func(s *framework.Shard, cluster logicalcluster.Name, role, user string) {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role + "-" + user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		if _, err := kube(t, s, cluster).RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bindUser(shard1, providerCluster, "use-remote-kind", "alice")
	bindUser(root, logicalcluster.Root, "cluster-admin", "alice")
	bindUser(root, logicalcluster.Root, "cluster-admin", "bob")
	for _, u := range []struct {
		token, name string
		allowed     bool
	}{{"bob-token", "by-bob", false}, {"alice-token", "by-alice", true}} {
		client, err := kcpClientForToken(root, logicalcluster.Root, u.token)
		if err != nil {
			t.Fatal(err)
		}
		ws := typed.DeepCopy()
		ws.Name, ws.ResourceVersion = u.name, ""
		eventually(t, 30*time.Second, u.name+" allowed="+fmt.Sprint(u.allowed), func(ctx context.Context) (bool, error) {
			_, err := client.Workspaces().Create(ctx, ws, metav1.CreateOptions{})
			if u.allowed {
				return err == nil, nil
			}
			return apierrors.IsForbidden(err), nil
		})
	}

	// An export of shard-1, bound on root.
	publishCowboys(t, shard1, providerCluster)
	consumer := createWorkspaceOn(t, root, logicalcluster.Root, "consumer", "root")
	consumerCluster := logicalcluster.Name(consumer.Spec.Cluster)
	createBinding(t, root, consumerCluster, "cowboys", "root:provider", "wildwest.dev")
	b := waitBound(t, root, consumerCluster, "cowboys")
	if b.Status.APIExportClusterName != providerCluster.String() {
		t.Errorf("status.apiExportClusterName = %q, want %s", b.Status.APIExportClusterName, providerCluster)
	}
	root.MustKubectl(t, consumerCluster, "create", "-f", yamlFile(t, "one.yaml", cowboyOne))

	// The standalone virtual workspaces of root, with the cache, serve
	// the consumers on root of the export on shard-1; whether kcp-admin
	// may reach the export's content is asked of shard-1.
	vw := startVirtualWorkspaces(t, root, func(o *vwoptions.Options) {
		o.CacheKubeconfig = root.Kubeconfig
		o.ShardName = "root"
		o.ClientCAFile = caCert
	})
	vwConfig := &rest.Config{
		Host: vw.URL + "/services/apiexport/root:provider/wildwest.dev/clusters/*",
		TLSClientConfig: rest.TLSClientConfig{CAFile: vw.CAFile,
			CertFile: root.Certs.KCPAdmin.CertFile, KeyFile: root.Certs.KCPAdmin.KeyFile},
	}
	vwClient, err := dynamic.NewForConfig(vwConfig)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the consumer's cowboy through root's virtual workspaces", func(ctx context.Context) (bool, error) {
		list, err := vwClient.Resource(cowboysGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		return len(list.Items) == 1 && logicalcluster.From(&list.Items[0]) == consumerCluster, nil
	})

	// Orphans on shard-1 whose owner would be on root: the sweep asks the
	// shard that made them (their owner-shard annotation), and deletes
	// only those whose Workspace or parent that shard says are gone; one
	// without the annotation cannot be decided in a multi-shard
	// installation and stays.
	for _, o := range []struct{ cluster, ownerCluster, owner, ownerShard string }{
		{"orphan-ghost", "root", "ghost", "root"},
		{"orphan-nowhere", "nowhere-at-all", "ghost", "root"},
		{"orphan-unknown", "nowhere-at-all", "ghost", ""},
	} {
		lc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
			"metadata": map[string]any{"name": "cluster"},
			"spec": map[string]any{"owner": map[string]any{
				"apiVersion": "tenancy.kcp.io/v1alpha1", "resource": "workspaces", "name": o.owner, "cluster": o.ownerCluster, "uid": "uid-ghost",
			}},
		}}
		if o.ownerShard != "" {
			lc.SetAnnotations(map[string]string{corev1alpha1.LogicalClusterOwnerShardAnnotationKey: o.ownerShard})
		}
		if _, err := dynamicFor(t, shard1, logicalcluster.Name(o.cluster)).Resource(logicalClusterGVR).Create(ctx, lc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating logical cluster %s on shard-1: %v", o.cluster, err)
		}
	}
	for _, c := range []string{"orphan-ghost", "orphan-nowhere"} {
		eventually(t, time.Minute, "orphan "+c+" on shard-1 deleted", func(ctx context.Context) (bool, error) {
			_, err := dynamicFor(t, shard1, logicalcluster.Name(c)).Resource(logicalClusterGVR).Get(ctx, "cluster", metav1.GetOptions{})
			return err != nil, nil
		})
	}
	if _, err := dynamicFor(t, shard1, "orphan-unknown").Resource(logicalClusterGVR).Get(ctx, "cluster", metav1.GetOptions{}); err != nil {
		t.Errorf("a logical cluster without its owner's shard was deleted: %v", err)
	}
	lc, err := kcpClient(t, shard1, providerCluster).LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
	if err != nil || lc.Annotations[corev1alpha1.LogicalClusterOwnerShardAnnotationKey] != "root" {
		t.Errorf("the provider's logical cluster on shard-1 names its owner's shard %q (%v), want root", lc.Annotations[corev1alpha1.LogicalClusterOwnerShardAnnotationKey], err)
	}

	// With shard-1 stopped, the bound API keeps serving on root.
	shard1.Stop()
	if out := root.MustKubectl(t, consumerCluster, "get", "cowboys", "-o", "name"); strings.TrimSpace(out) != "cowboy.wildwest.dev/one" {
		t.Errorf("kubectl get cowboys with shard-1 stopped: %q", out)
	}
	root.MustKubectl(t, consumerCluster, "create", "-f", yamlFile(t, "two.yaml", strings.ReplaceAll(cowboyOne, "one", "two")))
	shard1.Start()
	// The workspace's logical cluster on shard-1, whose owner is on root,
	// survives a sweep after the restart.
	time.Sleep(3 * time.Second)
	if _, err := kcpClient(t, shard1, providerCluster).LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the provider's logical cluster on shard-1 after a restart and sweep: %v", err)
	}

	// Deleting the workspace deletes its logical cluster on shard-1.
	if err := kcpClient(t, root, logicalcluster.Root).Workspaces().Delete(ctx, "provider", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the logical cluster on shard-1 deleted", func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, shard1, providerCluster).LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	waitWorkspaceGone(t, root, logicalcluster.Root, "provider", time.Minute)
}
