package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// kcpAdminKubectl runs the real kubectl as kcp-admin (the admin
// kubeconfig's base context: not a shard admin) against a workspace path,
// with a discovery cache of its own.
func kcpAdminKubectl(t *testing.T, s *framework.Shard, cache string) func(path string, args ...string) (string, error) {
	return func(path string, args ...string) (string, error) {
		t.Helper()
		full := append([]string{"--kubeconfig", s.Kubeconfig, "--context", "base", "--server", s.URL + "/clusters/" + path, "--cache-dir", cache}, args...)
		out, err := exec.Command(framework.KubectlPath(t), full...).CombinedOutput()
		return string(out), err
	}
}

var identityHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestCoreAPIsThroughBindings: root publishes kcp's own APIs as APIExports
// and binds them; a new workspace serves Workspaces and Partitions through
// its default bindings to root:tenancy.kcp.io and root:topology.kcp.io,
// stored under the export's identity; root's maximal permission policy for
// tenancy.kcp.io bounds what local RBAC allows; without the binding the
// workspace serves no Workspaces, and binding again serves them.
func TestCoreAPIsThroughBindings(t *testing.T) {
	s := framework.StartShard(t)
	kubectl := kcpAdminKubectl(t, s, t.TempDir())
	root := kcpClient(t, s, logicalcluster.Root)

	// Root holds the exports, with identities, and binds them.
	hashes := map[string]string{}
	for _, name := range []string{"tenancy.kcp.io", "topology.kcp.io", "shards.core.kcp.io"} {
		e, err := root.APIExports().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil || !identityHashRE.MatchString(e.Status.IdentityHash) {
			t.Fatalf("APIExport root:%s: %v %+v", name, err, e)
		}
		hashes[name] = e.Status.IdentityHash
		if b := waitBound(t, s, logicalcluster.Root, name); b.Status.APIExportClusterName != "root" {
			t.Errorf("root's binding %s: %+v", name, b.Status)
		}
	}
	if out, err := kubectl("root", "get", "apiresourceschemas", "-o", "name"); err != nil ||
		!regexp.MustCompile(`apiresourceschema.apis.kcp.io/v[0-9a-f]{8}\.workspaces\.tenancy\.kcp\.io`).MatchString(out) {
		t.Errorf("root's APIResourceSchemas: %v\n%s", err, out)
	}
	if out, err := kubectl("root", "explain", "workspaces.spec.type"); err != nil || !strings.Contains(out, "FIELDS:") {
		t.Errorf("kubectl explain workspaces.spec.type in root: %v\n%s", err, out)
	}

	// A new workspace binds tenancy.kcp.io and topology.kcp.io.
	org := createWorkspace(t, s, logicalcluster.Root, "org", nil)
	orgCluster := logicalcluster.Name(org.Spec.Cluster)
	for _, name := range []string{"tenancy.kcp.io", "topology.kcp.io"} {
		b := waitBound(t, s, orgCluster, name)
		for _, r := range b.Status.BoundResources {
			if r.Schema.IdentityHash != hashes[name] {
				t.Errorf("binding %s in root:org binds %s under identity %s, not the export's %s", name, r.Resource, r.Schema.IdentityHash, hashes[name])
			}
		}
	}
	out, err := kubectl("root:org", "api-resources", "--api-group", "tenancy.kcp.io", "-o", "name")
	if err != nil || !strings.Contains(out, "workspaces.tenancy.kcp.io") || !strings.Contains(out, "workspacetypes.tenancy.kcp.io") {
		t.Errorf("discovery of tenancy.kcp.io in root:org: %v\n%s", err, out)
	}
	if out, err := kubectl("root:org", "create", "-f", yamlFile(t, "team.yaml", "apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: team\n")); err != nil {
		t.Fatalf("kcp-admin creating a workspace in root:org: %v\n%s", err, out)
	}
	if out, err := kubectl("root:org", "get", "partitions"); err != nil {
		t.Errorf("partitions in root:org: %v\n%s", err, out)
	}
	// The Workspace is stored under the identity of tenancy.kcp.io.
	etcd := shardEtcd(t, s)
	key := "/registry/tenancy.kcp.io/workspaces/" + hashes["tenancy.kcp.io"] + "/" + string(orgCluster) + "/team"
	if resp, err := etcd.Get(t.Context(), key, clientv3.WithCountOnly()); err != nil || resp.Count != 1 {
		t.Errorf("no key %s: %v", key, err)
	}
	if resp, err := etcd.Get(t.Context(), "/registry/tenancy.kcp.io/workspaces/"+string(orgCluster)+"/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 0 {
		t.Errorf("workspaces of root:org stored outside the identity: %v", err)
	}

	// The maximal permission policy of tenancy.kcp.io, narrowed in root,
	// bounds kcp-admin's local permissions.
	policy := "system:kcp:apiexport:tenancy:maximal-permission-policy"
	setVerbs := func(verbs ...string) {
		t.Helper()
		roles := kube(t, s, logicalcluster.Root).RbacV1().ClusterRoles()
		r, err := roles.Get(t.Context(), policy, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.Rules[0].Verbs = verbs
		if _, err := roles.Update(t.Context(), r, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := kubectl("root", "get", "clusterrolebinding", "system:kcp:authenticated:apiexport:tenancy:maximal-permission-policy", "-o", "jsonpath={.subjects[0].name}"); err != nil || out != "apis.kcp.io:binding:system:authenticated" {
		t.Errorf("the policy's binding in root: %v %q", err, out)
	}
	setVerbs("get", "list", "watch")
	blocked := yamlFile(t, "blocked.yaml", "apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: blocked\n")
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		out, err = kubectl("root:org", "create", "-f", blocked)
		return err != nil && strings.Contains(out, "maximal permission policy of APIExport root|tenancy.kcp.io"), nil
	}); err != nil {
		t.Errorf("creating a workspace the policy does not allow: %v\n%s", err, out)
	}
	if out, err := kubectl("root:org", "get", "workspaces"); err != nil || !strings.Contains(out, "team") {
		t.Errorf("reading workspaces the policy allows: %v\n%s", err, out)
	}
	if out, err := kubectl("root:org", "create", "configmap", "unbounded"); err != nil {
		t.Errorf("a configmap is not bound by the policy: %v\n%s", err, out)
	}
	setVerbs("*")
	eventuallyAllowed(t, "creating a workspace once the policy allows it again", func(context.Context) error {
		_, err := kubectl("root:org", "create", "-f", blocked)
		return err
	})

	// Without its tenancy.kcp.io binding a workspace serves no Workspaces;
	// Partitions stay, through their own binding.
	plain := createWorkspace(t, s, logicalcluster.Root, "plain", nil)
	plainCluster := logicalcluster.Name(plain.Spec.Cluster)
	waitBound(t, s, plainCluster, "tenancy.kcp.io")
	if out, err := kubectl("root:plain", "delete", "apibinding", "tenancy.kcp.io"); err != nil {
		t.Fatalf("deleting the binding: %v\n%s", err, out)
	}
	out, err = kubectl("root:plain", "get", "--raw", "/clusters/root:plain/apis/tenancy.kcp.io/v1alpha1/workspaces")
	if err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("workspaces without the binding: %v\n%s", err, out)
	}
	fresh := kcpAdminKubectl(t, s, t.TempDir())
	if out, err := fresh("root:plain", "api-resources", "-o", "name"); err != nil || strings.Contains(out, "tenancy.kcp.io") || !strings.Contains(out, "partitions.topology.kcp.io") {
		t.Errorf("discovery without the tenancy.kcp.io binding: %v\n%s", err, out)
	}
	createBinding(t, s, plainCluster, "tenancy", "root", "tenancy.kcp.io")
	waitBound(t, s, plainCluster, "tenancy")
	eventuallyAllowed(t, "workspaces served again once bound", func(context.Context) error {
		out, err := kubectl("root:plain", "get", "--raw", "/clusters/root:plain/apis/tenancy.kcp.io/v1alpha1/workspaces")
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})
}

// TestCoreAPIsForeignExport: an export of tenancy.kcp.io's resources
// under another identity cannot be bound: the shard serves them under
// root's identity only.
func TestCoreAPIsForeignExport(t *testing.T) {
	s := framework.StartShard(t)
	provider := createWorkspace(t, s, logicalcluster.Root, "provider", nil)
	consumer := createWorkspace(t, s, logicalcluster.Root, "consumer", nil)
	pc, cc := logicalcluster.Name(provider.Spec.Cluster), logicalcluster.Name(consumer.Spec.Cluster)
	schemas, err := kcpClient(t, s, logicalcluster.Root).APIResourceSchemas().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var workspaces *apisv1alpha1.APIResourceSchema
	for i := range schemas.Items {
		if strings.HasSuffix(schemas.Items[i].Name, ".workspaces.tenancy.kcp.io") {
			workspaces = &schemas.Items[i]
		}
	}
	if workspaces == nil {
		t.Fatal("root has no APIResourceSchema of workspaces")
	}
	copied := &apisv1alpha1.APIResourceSchema{ObjectMeta: metav1.ObjectMeta{Name: workspaces.Name}, Spec: workspaces.Spec}
	if _, err := kcpClient(t, s, pc).APIResourceSchemas().Create(t.Context(), copied, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	export := &apisv1alpha1.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "my-tenancy"}, Spec: apisv1alpha1.APIExportSpec{LatestResourceSchemas: []string{workspaces.Name}}}
	if _, err := kcpClient(t, s, pc).APIExports().Create(t.Context(), export, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kcpClient(t, s, cc).APIBindings().Delete(t.Context(), "tenancy.kcp.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, s, cc).APIBindings().Get(ctx, "tenancy.kcp.io", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatal("the tenancy.kcp.io binding was not deleted")
	}
	createBinding(t, s, cc, "mine", string(pc), "my-tenancy")
	var msg string
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		b, err := kcpClient(t, s, cc).APIBindings().Get(ctx, "mine", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range b.Status.Conditions {
			if c.Reason == apisv1alpha1.NamingConflictsReason {
				msg = c.Message
				return true, nil
			}
		}
		return false, nil
	}); err != nil || !strings.Contains(msg, "built-in") {
		t.Errorf("binding a foreign export of workspaces: %v %q", err, msg)
	}
}

// TestCoreIdentitiesAfterRestart: the identities of root's exports are
// kept across restarts, and objects stored before kcp's APIs had
// identities ("/registry/tenancy.kcp.io/workspacetypes/<cluster>/<name>")
// are moved under them on the next start.
func TestCoreIdentitiesAfterRestart(t *testing.T) {
	s := framework.StartShard(t)
	root := kcpClient(t, s, logicalcluster.Root)
	before, err := root.APIExports().Get(t.Context(), "tenancy.kcp.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hash := before.Status.IdentityHash
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}
	if _, err := root.WorkspaceTypes().Create(t.Context(), wt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Put it back where older versions stored it.
	etcd := shardEtcd(t, s)
	newKey := "/registry/tenancy.kcp.io/workspacetypes/" + hash + "/root/legacy"
	oldKey := "/registry/tenancy.kcp.io/workspacetypes/root/legacy"
	resp, err := etcd.Get(t.Context(), newKey)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("no key %s: %v", newKey, err)
	}
	if _, err := etcd.Txn(t.Context()).Then(clientv3.OpPut(oldKey, string(resp.Kvs[0].Value)), clientv3.OpDelete(newKey),
		clientv3.OpDelete("/registry/tessera/migrations/core-identities")).Commit(); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if err := os.Remove(filepath.Join(s.Options.RootDirectory, "kubectl-cache")); err != nil && !os.IsNotExist(err) {
		t.Log(err)
	}
	s.Start()
	root = kcpClient(t, s, logicalcluster.Root)
	after, err := root.APIExports().Get(t.Context(), "tenancy.kcp.io", metav1.GetOptions{})
	if err != nil || after.Status.IdentityHash != hash {
		t.Fatalf("the identity changed across a restart: %v %s -> %s", err, hash, after.Status.IdentityHash)
	}
	if _, err := root.WorkspaceTypes().Get(t.Context(), "legacy", metav1.GetOptions{}); err != nil {
		t.Errorf("the WorkspaceType stored in the old layout: %v", err)
	}
	etcd = shardEtcd(t, s)
	if resp, err := etcd.Get(t.Context(), oldKey, clientv3.WithCountOnly()); err != nil || resp.Count != 0 {
		t.Errorf("the old key is still there: %v", err)
	}
	// root's RBAC for the exports survives the restart.
	if _, err := kube(t, s, logicalcluster.Root).RbacV1().ClusterRoles().Get(t.Context(), "system:kcp:apiexport:tenancy:bind", metav1.GetOptions{}); err != nil {
		t.Errorf("the bind role of tenancy.kcp.io: %v", err)
	}
}
