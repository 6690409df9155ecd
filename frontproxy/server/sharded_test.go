package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	shardoptions "github.com/tessera-dev/tessera/shard/options"
	shardserver "github.com/tessera-dev/tessera/shard/server"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestHomeOnAnotherShard: with root:users on shard-1, the root shard
// creates the home's buckets and the home through shard-1, and the
// front-proxy routes ~ to wherever the home landed.
func TestHomeOnAnotherShard(t *testing.T) {
	caCert, caKey := framework.NewInstallationCA(t)
	users, proxyClients, serving := newSigner(t, "users"), newSigner(t, "front-proxy-clients"), newSigner(t, "front-proxy-serving")
	common := []framework.Option{
		framework.WithInstallationCA(caCert, caKey),
		framework.WithRequestHeader(proxyClients.caFile(t), "front-proxy"),
		withTokens(t, "bob-token,bob,bob-uid,home-owners"),
		func(o *shardoptions.Options) { o.HomeCreatorGroups = []string{"home-owners"} },
	}
	root := framework.StartShard(t, common...)
	shard1 := framework.StartShard(t, append(common, framework.JoiningRoot(root, "shard-1"))...)
	kcpOf := func(s *framework.Shard, cluster logicalcluster.Name) *kcpclient.Clientset {
		c, err := kcpclient.NewForConfig(s.Config(cluster))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	eventually(t, time.Minute, "shard-1 registered", func(ctx context.Context) (bool, error) {
		_, err := kcpOf(root, logicalcluster.Root).Shards().Get(ctx, "shard-1", metav1.GetOptions{})
		return err == nil, nil
	})
	usersWS := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "users"},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type:     &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.HomeRootWorkspaceTypeName, Path: "root"},
			Location: &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "shard-1"}}},
		},
	}
	if _, err := kcpOf(root, logicalcluster.Root).Workspaces().Create(t.Context(), usersWS, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var usersCluster logicalcluster.Name
	eventually(t, time.Minute, "root:users Ready on shard-1", func(ctx context.Context) (bool, error) {
		ws, err := kcpOf(root, logicalcluster.Root).Workspaces().Get(ctx, "users", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		usersCluster = logicalcluster.Name(ws.Spec.Cluster)
		return ws.Status.Phase == "Ready" && ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey] == "shard-1", nil
	})

	e := startProxy(t, root, caCert, time.Hour, users, proxyClients, serving)
	bob := e.tokenKubeconfig(t, "bob-token", "~")
	eventually(t, time.Minute, "bob creating a configmap in ~ through the proxy", func(context.Context) (bool, error) {
		out, err := e.kubectl(t, bob, "~", "create", "configmap", "made-at-home", "--from-literal=k=v")
		return err == nil || strings.Contains(out, "AlreadyExists"), errorOf(out, err)
	})
	if out, err := e.kubectl(t, bob, "~", "get", "configmaps"); err != nil || !strings.Contains(out, "made-at-home") {
		t.Fatalf("kubectl get configmaps in ~: %v\n%s", err, out)
	}

	// The home's chain went through shard-1: its first bucket is a
	// Workspace in root:users, which lives there.
	want := shardserver.HomePath(shardserver.HomePrefix, "bob", root.Options.HomeWorkspacesBucketLevels, root.Options.HomeWorkspacesBucketSize)
	segs := strings.Split(want.String(), ":")
	parent, shardOf := usersCluster, map[string]*framework.Shard{"root": root, "shard-1": shard1}
	owner := shard1
	var home *tenancyv1alpha1.Workspace
	for _, seg := range segs[2:] {
		ws, err := kcpOf(owner, parent).Workspaces().Get(t.Context(), seg, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("workspace %s in %s (on the way to %s): %v", seg, parent, want, err)
		}
		home, parent = ws, logicalcluster.Name(ws.Spec.Cluster)
		owner = shardOf[ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey]]
		if owner == nil {
			t.Fatalf("workspace %s names shard %q", seg, ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey])
		}
	}
	kube, err := kubernetes.NewForConfig(owner.Config(logicalcluster.Name(home.Spec.Cluster)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(t.Context(), "made-at-home", metav1.GetOptions{}); err != nil {
		t.Errorf("the configmap is not in bob's home %s on shard %s: %v", want, home.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey], err)
	}
}
