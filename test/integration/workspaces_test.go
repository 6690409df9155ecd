package integration

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/shard/server"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestWorkspacesWithKubectl plays the quickstart transcript of the seed
// with the real kubectl and the kubectl-ws plugin on PATH.
func TestWorkspacesWithKubectl(t *testing.T) {
	s := framework.StartShard(t)
	ws := newWSSession(t, s.Kubeconfig, wsPlugin(t))

	ws.expect([]string{"ws", "."}, `Current workspace is "root".`)
	ws.expect([]string{"ws", "create", "a", "--enter"},
		`Workspace "a" (type root:organization) created. Waiting for it to be ready...`,
		`Workspace "a" (type root:organization) is ready to use.`,
		`Current workspace is "root:a".`)
	ws.expect([]string{"ws", "create", "b"},
		`Workspace "b" (type root:universal) created. Waiting for it to be ready...`,
		`Workspace "b" (type root:universal) is ready to use.`)
	out := ws.must("get", "workspaces")
	if !regexp.MustCompile(`(?m)^NAME\s+TYPE\s+PHASE\s+URL`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^b\s+universal\s+Ready\s+`+regexp.QuoteMeta(s.URL+"/clusters/root:a:b")).MatchString(out) {
		t.Errorf("kubectl get workspaces:\n%s", out)
	}
	ws.expect([]string{"ws", "b"}, `Current workspace is "root:a:b".`)
	// A universal workspace has its default namespace when it is Ready.
	ws.expect([]string{"get", "namespace", "default"}, "default")
	ws.expect([]string{"ws", ".."}, `Current workspace is "root:a".`)
	ws.expect([]string{"ws", "-"}, `Current workspace is "root:a:b".`)
	ws.expect([]string{"ws", "root"}, `Current workspace is "root".`)
	out = ws.must("get", "workspaces")
	if !regexp.MustCompile(`(?m)^a\s+organization\s+Ready\s+` + regexp.QuoteMeta(s.URL+"/clusters/root:a")).MatchString(out) {
		t.Errorf("kubectl get workspaces in root:\n%s", out)
	}
	ws.expect([]string{"ws", "tree"}, "root", "a", "b")
	ws.expect([]string{"ws", "root:a:b"}, `Current workspace is "root:a:b".`)
	ws.expect([]string{"config", "get-contexts"}, "workspace.kcp.io/current", "workspace.kcp.io/previous")
	ws.must("ws", "root")

	out = ws.must("get", "workspacetypes", "-o", "name")
	for _, typ := range []string{"home", "homebucket", "homeroot", "organization", "root", "team", "universal"} {
		if !strings.Contains(out, "workspacetype.tenancy.kcp.io/"+typ+"\n") {
			t.Errorf("kubectl get workspacetypes lacks %s:\n%s", typ, out)
		}
	}
	// The Shard registered itself in root.
	ws.expect([]string{"get", "shards"}, "root", s.URL)

	// kubectl ws without arguments enters the home workspace of kcp-admin
	// (the admin kubeconfig's user, as in the seed), created on first use.
	home := server.HomePath(server.HomePrefix, certs.KCPAdminUser, 2, 2).String()
	if !regexp.MustCompile(`^root:users:[a-z][a-z0-9]:[a-z][a-z0-9]:kcp-admin$`).MatchString(home) {
		t.Errorf("home path %q does not have the seed's shape", home)
	}
	ws.expect([]string{"ws"}, `Current workspace is "`+home+`".`)
	ws.must("create", "configmap", "mine", "--from-literal=a=b")
	ws.expect([]string{"ws", "root:users"}, `Current workspace is "root:users".`)
	ws.expect([]string{"get", "workspaces"}, "homebucket")
	ws.must("ws", "root")

	// Deleting a deletes it, its logical cluster and b below it.
	aWS, err := kcpClient(t, s, "root").Workspaces().Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bWS, err := kcpClient(t, s, logicalcluster.Name(aWS.Spec.Cluster)).Workspaces().Get(t.Context(), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws.must("delete", "workspace", "a", "--wait=false")
	waitWorkspaceGone(t, s, "root", "a", workspaceTimeout)
	etcd := shardEtcd(t, s)
	for _, c := range []string{aWS.Spec.Cluster, bWS.Spec.Cluster} {
		keys, err := clusterKeys(t.Context(), etcd, logicalcluster.Name(c))
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			t.Errorf("keys of deleted logical cluster %s left: %v", c, keys)
		}
	}
	if _, err := ws.run("ws", "a"); err == nil {
		t.Error("kubectl ws a after deleting a: want an error")
	}
}

// TestWorkspaceScheduling checks what the scheduler writes: the Workspace's
// cluster, URL and shard, and the LogicalCluster's path, owner, type and
// initializers.
func TestWorkspaceScheduling(t *testing.T) {
	s := framework.StartShard(t)
	org := createWorkspace(t, s, "root", "org", nil)
	if org.Spec.Type == nil || org.Spec.Type.String() != "root:organization" {
		t.Errorf("default type under root: %v, want root:organization", org.Spec.Type)
	}
	if org.Spec.Cluster == "" || org.Spec.URL != s.URL+"/clusters/root:org" || org.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] != "root" {
		t.Errorf("scheduled workspace: cluster %q URL %q annotations %v", org.Spec.Cluster, org.Spec.URL, org.Annotations)
	}
	if !slices.Contains(org.Finalizers, corev1alpha1.LogicalClusterFinalizer) {
		t.Errorf("finalizers %v lack %s", org.Finalizers, corev1alpha1.LogicalClusterFinalizer)
	}
	lc, err := kcpClient(t, s, logicalcluster.Name(org.Spec.Cluster)).LogicalClusters().Get(t.Context(), corev1alpha1.LogicalClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lc.Annotations[logicalcluster.PathAnnotationKey] != "root:org" || lc.Annotations[corev1alpha1.LogicalClusterTypeAnnotationKey] != "root:organization" {
		t.Errorf("LogicalCluster annotations %v", lc.Annotations)
	}
	if o := lc.Spec.Owner; o == nil || o.Cluster != "root" || o.Name != "org" || o.UID != org.UID || o.Resource != "workspaces" {
		t.Errorf("LogicalCluster owner %+v", lc.Spec.Owner)
	}
	if !slices.Contains(lc.Spec.Initializers, corev1alpha1.OwnerInitializer) || !slices.Contains(lc.Spec.Initializers, "root:universal") {
		t.Errorf("LogicalCluster initializers %v, want system:owner and root:universal (organization extends universal)", lc.Spec.Initializers)
	}
	// The owner is cluster-admin of the new workspace.
	crb, err := kube(t, s, logicalcluster.Name(org.Spec.Cluster)).RbacV1().ClusterRoleBindings().Get(t.Context(), "workspace-admin", metav1.GetOptions{})
	if err != nil || crb.RoleRef.Name != "cluster-admin" || len(crb.Subjects) != 1 || crb.Subjects[0].Name != certs.AdminUser {
		t.Errorf("workspace-admin binding %+v, %v", crb, err)
	}

	// The same workspace is reachable by its path and by its cluster name.
	for _, c := range []logicalcluster.Name{"root:org", logicalcluster.Name(org.Spec.Cluster)} {
		if _, err := kube(t, s, c).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
			t.Errorf("default namespace through %s: %v", c, err)
		}
	}

	// Required groups are inherited by children.
	lc.Annotations[corev1alpha1.RequiredGroupsAnnotationKey] = "team-x"
	if _, err := kcpClient(t, s, logicalcluster.Name(org.Spec.Cluster)).LogicalClusters().Update(t.Context(), lc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	child := createWorkspace(t, s, "root:org", "child", nil)
	childLC, err := kcpClient(t, s, logicalcluster.Name(child.Spec.Cluster)).LogicalClusters().Get(t.Context(), corev1alpha1.LogicalClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if childLC.Annotations[corev1alpha1.RequiredGroupsAnnotationKey] != "team-x" || childLC.Annotations[logicalcluster.PathAnnotationKey] != "root:org:child" {
		t.Errorf("child LogicalCluster annotations %v", childLC.Annotations)
	}
	if child.Spec.Type.String() != "root:universal" {
		t.Errorf("default type under an organization: %v", child.Spec.Type)
	}

	// Bad names get a Status.
	_, err = kcpClient(t, s, "root").Workspaces().Create(t.Context(), &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "Not_Valid"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("invalid workspace name: %v, want 422", err)
	}
	_, err = kcpClient(t, s, "root").Workspaces().Create(t.Context(), &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "nosuchtype"}},
	}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "nosuchtype") {
		t.Errorf("unknown workspace type: %v", err)
	}
	// Nobody but the system sets spec.cluster; a user cannot take over
	// another workspace's logical cluster (covered for admins by the
	// admission's masters rule, for users in TestWorkspaceTypeUse).
}

// TestWorkspaceTypeConstraints checks allowed parents and children.
func TestWorkspaceTypeConstraints(t *testing.T) {
	s := framework.StartShard(t)
	createWorkspace(t, s, "root", "org", nil)
	createWorkspace(t, s, "root:org", "team", &tenancyv1alpha1.WorkspaceTypeReference{Name: "team"})
	createWorkspace(t, s, "root:org:team", "sub", &tenancyv1alpha1.WorkspaceTypeReference{Name: "team", Path: "root"})

	refused := func(parent logicalcluster.Name, name, typ string, wants ...string) {
		t.Helper()
		_, err := kcpClient(t, s, parent).Workspaces().Create(t.Context(), &tenancyv1alpha1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(typ)}},
		}, metav1.CreateOptions{})
		if err == nil {
			t.Errorf("creating a %s workspace in %s: want it refused", typ, parent)
			return
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("creating a %s workspace in %s: error %q lacks %q", typ, parent, err, w)
			}
		}
	}
	refused("root:org:team", "org2", "organization", "organization", "team")
	refused("root", "team2", "team", "team", "root")
	refused("root:org", "users", "homebucket", "homebucket")
	// Through kubectl the message reaches the user too.
	ws := newWSSession(t, s.Kubeconfig, wsPlugin(t))
	ws.must("ws", "root:org:team")
	out, err := ws.run("ws", "create", "nested-org", "--type", "root:organization")
	if err == nil || !strings.Contains(out, "organization") {
		t.Errorf("kubectl ws create of an organization in a team: %v\n%s", err, out)
	}
}

// TestWorkspaceTypeUse checks that creating a workspace needs verb use on
// its type, which every authenticated user has for universal.
func TestWorkspaceTypeUse(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "alice-token,alice,alice-uid,"))
	createWorkspace(t, s, "root", "org", nil)
	// alice may create workspaces in root:org...
	bindClusterRole(t, s, "root:org", "", "alice-admin", "cluster-admin", authzUser("alice"))
	alice, err := kcpClientForToken(s, "root:org", "alice-token")
	if err != nil {
		t.Fatal(err)
	}
	// ... universal ones, which everybody may use ...
	eventuallyAllowed(t, "alice creating a universal workspace", func(ctx context.Context) error {
		_, err := alice.Workspaces().Create(ctx, &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	waitWorkspaceReady(t, s, "root:org", "mine")
	// ... and she owns it: cluster-admin inside.
	aliceInside, err := kcpClientForToken(s, "root:org:mine", "alice-token")
	if err != nil {
		t.Fatal(err)
	}
	eventuallyAllowed(t, "alice listing workspaces in her workspace", func(ctx context.Context) error {
		_, err := aliceInside.Workspaces().List(ctx, metav1.ListOptions{})
		return err
	})
	// ... but not teams: no use permission on root:team.
	_, err = alice.Workspaces().Create(t.Context(), &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "team"},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "team", Path: "root"}},
	}, metav1.CreateOptions{})
	forbiddenBecause(t, "alice creating a team", err, "alice", "team")
	// Nor may she set spec.cluster to take over a logical cluster.
	_, err = alice.Workspaces().Create(t.Context(), &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "thief"},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Cluster: "root"},
	}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("alice setting spec.cluster: %v, want 403", err)
	}

	// Granted use on team in root, she may.
	createRole(t, s, "root", "use-team", rbacv1.PolicyRule{Verbs: []string{"use"}, APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{"team"}})
	bindClusterRole(t, s, "root", "", "alice-use-team", "use-team", authzUser("alice"))
	eventuallyAllowed(t, "alice creating a team after being granted use", func(ctx context.Context) error {
		_, err := alice.Workspaces().Create(ctx, &tenancyv1alpha1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: "team"},
			Spec:       tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "team", Path: "root"}},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	waitWorkspaceReady(t, s, "root:org", "team")
}

// TestHomeWorkspace checks that a user's home is created on first access,
// only for members of the home creator groups.
func TestHomeWorkspace(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "bob-token,bob,bob-uid,"))
	bob, err := kcpClientForToken(s, "root", "bob-token")
	if err != nil {
		t.Fatal(err)
	}
	home, err := bob.Workspaces().Get(t.Context(), "~", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("GET workspaces/~ as bob: %v", err)
	}
	want := server.HomePath(server.HomePrefix, "bob", 2, 2)
	if home.Spec.URL != s.URL+"/clusters/"+want.String() || home.Status.Phase != corev1alpha1.LogicalClusterPhaseReady || home.Spec.Type.String() != "root:home" {
		t.Errorf("home of bob: URL %q phase %q type %v, want %s Ready root:home", home.Spec.URL, home.Status.Phase, home.Spec.Type, want)
	}
	// bob is cluster-admin at home, through ~ and through the full path.
	for i, c := range []logicalcluster.Name{"~", logicalcluster.Name(want.String())} {
		k, err := kubeForToken(s, c, "bob-token")
		if err != nil {
			t.Fatal(err)
		}
		eventuallyAllowed(t, "bob creating a configmap at home through "+string(c), func(ctx context.Context) error {
			_, err := k.CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("via-%d", i)), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	}
	// A second access finds the same home.
	again, err := bob.Workspaces().Get(t.Context(), "~", metav1.GetOptions{})
	if err != nil || again.UID != home.UID {
		t.Errorf("second GET of ~: %v, uid %v vs %v", err, again.UID, home.UID)
	}
}

// TestNoHomeOutsideCreatorGroups checks --home-creator-groups.
func TestNoHomeOutsideCreatorGroups(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "carol-token,carol,carol-uid,"), func(o *options.Options) {
		o.HomeCreatorGroups = []string{"home-owners"}
	})
	carol, err := kcpClientForToken(s, "root", "carol-token")
	if err != nil {
		t.Fatal(err)
	}
	_, err = carol.Workspaces().Get(t.Context(), "~", metav1.GetOptions{})
	forbiddenBecause(t, "carol's home", err, "carol", "home-owners")
	if _, err := kcpClient(t, s, "root").Workspaces().Get(t.Context(), "users", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("root:users after a refused home: %v, want NotFound", err)
	}
}

// TestDeleteWorkspaceTree deletes a tree of depth 3 with content and checks
// that no key of any of its logical clusters is left.
func TestDeleteWorkspaceTree(t *testing.T) {
	s := framework.StartShard(t)
	var clusters []logicalcluster.Name
	var walk func(parent logicalcluster.Path, depth int)
	walk = func(parent logicalcluster.Path, depth int) {
		if depth == 3 {
			return
		}
		for _, name := range []string{"x", "y"} {
			ws := createWorkspace(t, s, logicalcluster.Name(parent.String()), name, &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: "root"})
			c := logicalcluster.Name(ws.Spec.Cluster)
			clusters = append(clusters, c)
			if _, err := kube(t, s, c).CoreV1().ConfigMaps("default").Create(t.Context(), configMap("content"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			walk(parent.Join(name), depth+1)
		}
	}
	walk(logicalcluster.NewPath("root"), 0)
	if len(clusters) != 14 {
		t.Fatalf("%d workspaces, want 14", len(clusters))
	}
	start := time.Now()
	for _, name := range []string{"x", "y"} {
		if err := kcpClient(t, s, "root").Workspaces().Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitWorkspaceGone(t, s, "root", "x", 2*time.Minute)
	waitWorkspaceGone(t, s, "root", "y", 2*time.Minute)
	t.Logf("deleted a tree of %d workspaces in %v", len(clusters), time.Since(start))
	etcd := shardEtcd(t, s)
	for _, c := range clusters {
		keys, err := clusterKeys(t.Context(), etcd, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			t.Errorf("keys of deleted logical cluster %s left: %v", c, keys)
		}
	}
}
