package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	cacheoptions "github.com/tessera-dev/tessera/cacheserver/options"
	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

var (
	apiExportsGVR          = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexports"}
	apiResourceSchemasGVR  = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiresourceschemas"}
	clusterRolesGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterRoleBindingsGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// cacheClient is a dynamic client of the replicas of shard and cluster in
// the cache server at base.
func cacheClient(t *testing.T, base *rest.Config, shard, cluster string) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(base)
	cfg.Host += cacheserver.ScopeURL(shard, cluster)
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// replicaNames lists the names of the replicas of gvr.
func replicaNames(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource) ([]string, error) {
	list, err := client.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return names(list.Items), nil
}

// TestReplicationToEmbeddedCache: a shard started alone serves a cache
// server under /services/cache and replicates its exports, schemas,
// logical clusters and the RBAC that authorizes bind into it, and keeps
// the replicas in step with the objects.
func TestReplicationToEmbeddedCache(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "user-token,user,u1"))
	ctx := t.Context()
	createWorkspace(t, s, logicalcluster.Root, "provider", nil)
	provider := logicalcluster.Name(waitWorkspaceReady(t, s, logicalcluster.Root, "provider").Spec.Cluster)
	publishCowboys(t, s, provider)

	base := s.Config("")
	replicas := cacheClient(t, base, "root", provider.String())
	var export *unstructured.Unstructured
	eventually(t, 30*time.Second, "the export's replica", func(ctx context.Context) (bool, error) {
		var err error
		export, err = replicas.Resource(apiExportsGVR).Get(ctx, "wildwest.dev", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if got := export.GetAnnotations(); got["kcp.io/path"] != "root:provider" || got["kcp.io/shard"] != "root" || got["kcp.io/cluster"] != provider.String() {
		t.Errorf("the replica's annotations are %v, want kcp.io/path root:provider, kcp.io/shard root, kcp.io/cluster %s", got, provider)
	}
	if schemas, _, _ := unstructured.NestedStringSlice(export.Object, "spec", "latestResourceSchemas"); !slices.Contains(schemas, "v220920-6039d110.cowboys.wildwest.dev") {
		t.Errorf("the replica's spec.latestResourceSchemas are %v", schemas)
	}
	eventually(t, 30*time.Second, "the schema's and the logical cluster's replicas", func(ctx context.Context) (bool, error) {
		schemas, err := replicaNames(ctx, replicas, apiResourceSchemasGVR)
		if err != nil {
			return false, err
		}
		lcs, err := replicaNames(ctx, replicas, logicalClusterGVR)
		return slices.Equal(schemas, []string{"v220920-6039d110.cowboys.wildwest.dev"}) && slices.Equal(lcs, []string{"cluster"}), err
	})

	// A change follows.
	kcp := kcpClient(t, s, provider)
	e, err := kcp.APIExports().Get(ctx, "wildwest.dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Labels = map[string]string{"tier": "gold"}
	if _, err := kcp.APIExports().Update(ctx, e, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the label on the replica", func(ctx context.Context) (bool, error) {
		r, err := replicas.Resource(apiExportsGVR).Get(ctx, "wildwest.dev", metav1.GetOptions{})
		return err == nil && r.GetLabels()["tier"] == "gold", err
	})

	// RBAC: only what authorizes bind (and its bindings) is replicated.
	createRole(t, s, provider, "bind-cowboys", rbacv1.PolicyRule{APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports"}, ResourceNames: []string{"wildwest.dev"}, Verbs: []string{"bind"}})
	createRole(t, s, provider, "configmaps", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}})
	for _, role := range []string{"bind-cowboys", "configmaps"} {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role + "-user"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "user"}},
		}
		if _, err := kube(t, s, provider).RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the replicas of the bind role and its binding only", func(ctx context.Context) (bool, error) {
		roles, err := replicaNames(ctx, replicas, clusterRolesGVR)
		if err != nil {
			return false, err
		}
		bindings, err := replicaNames(ctx, replicas, clusterRoleBindingsGVR)
		return slices.Contains(roles, "bind-cowboys") && !slices.Contains(roles, "configmaps") &&
			slices.Contains(bindings, "bind-cowboys-user") && !slices.Contains(bindings, "configmaps-user"), err
	})

	// A replica without an object (left over from an earlier run) goes.
	ghost := export.DeepCopy()
	ghost.SetName("ghost.dev")
	ghost.SetResourceVersion("")
	if _, err := replicas.Resource(apiExportsGVR).Create(ctx, ghost, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Deleting the export deletes its replica.
	if err := kcp.APIExports().Delete(ctx, "wildwest.dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "no export replicas", func(ctx context.Context) (bool, error) {
		names, err := replicaNames(ctx, replicas, apiExportsGVR)
		return err == nil && len(names) == 0, err
	})

	// The cache is for shards: a user gets 403.
	user := rest.AnonymousClientConfig(base)
	user.BearerToken = "user-token"
	_, err = cacheClient(t, user, "*", "*").Resource(apiExportsGVR).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("a user listing the cache: %v, want Forbidden", err)
	}
}

// cacheProcess is a tessera-cache-server run in-process that can be
// stopped and started again on the same port and data.
type cacheProcess struct {
	t      *testing.T
	opts   *cacheoptions.Options
	cancel context.CancelFunc
	done   chan error
	// kubeconfig is the admin kubeconfig the server wrote.
	kubeconfig string
}

func startCache(t *testing.T) *cacheProcess {
	t.Helper()
	o := cacheoptions.NewOptions()
	o.RootDirectory = t.TempDir()
	o.EmbeddedEtcdUnsafeNoFsync = true
	o.EmbeddedEtcdLogLevel = "fatal"
	var err error
	for _, p := range []*int{&o.SecurePort, &o.EmbeddedEtcdClientPort, &o.EmbeddedEtcdPeerPort} {
		if *p, err = etcd.FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	c := &cacheProcess{t: t, opts: o}
	c.start()
	t.Cleanup(c.stop)
	return c
}

func (c *cacheProcess) start() {
	t := c.t
	t.Helper()
	completed, err := c.opts.Complete()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cacheserver.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := cfg.Complete().New(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c.cancel, c.done, c.kubeconfig = cancel, make(chan error, 1), cfg.KubeconfigPath()
	go func() { c.done <- srv.Run(ctx) }()
	admin := c.config()
	eventually(t, 30*time.Second, "the cache server's /readyz", func(ctx context.Context) (bool, error) {
		client, err := rest.HTTPClientFor(admin)
		if err != nil {
			return false, err
		}
		resp, err := client.Get(admin.Host + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == 200, nil
	})
}

func (c *cacheProcess) stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.t.Error("the cache server did not stop within 30s")
	}
	c.cancel = nil
}

// config is the admin configuration of the cache server's base URL.
func (c *cacheProcess) config() *rest.Config {
	c.t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "base"}).ClientConfig()
	if err != nil {
		c.t.Fatal(err)
	}
	return cfg
}

// TestReplicationConvergesAfterCacheOutage: with an external cache server
// (--cache-kubeconfig), changes made while the cache is down reach it
// when it is back: the replica of a deleted export goes, a new export
// appears once, and nothing else changes.
func TestReplicationConvergesAfterCacheOutage(t *testing.T) {
	cache := startCache(t)
	s := framework.StartShard(t, func(o *options.Options) { o.CacheKubeconfig = cache.kubeconfig })
	ctx := t.Context()
	createWorkspace(t, s, logicalcluster.Root, "provider", nil)
	provider := logicalcluster.Name(waitWorkspaceReady(t, s, logicalcluster.Root, "provider").Spec.Cluster)
	publishCowboys(t, s, provider)
	replicas := cacheClient(t, cache.config(), "root", provider.String())
	eventually(t, 30*time.Second, "the export's replica in the external cache", func(ctx context.Context) (bool, error) {
		names, err := replicaNames(ctx, replicas, apiExportsGVR)
		return slices.Equal(names, []string{"wildwest.dev"}), err
	})
	// The shard does not serve a cache itself.
	if _, err := cacheClient(t, s.Config(""), "*", "*").Resource(apiExportsGVR).List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("the shard serves /services/cache although an external cache server is configured")
	}

	cache.stop()
	kcp := kcpClient(t, s, provider)
	if err := kcp.APIExports().Delete(ctx, "wildwest.dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.MustKubectl(t, provider, "apply", "-f", yamlFile(t, "export.yaml", `apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata:
  name: other.dev
spec:
  latestResourceSchemas: []
`))
	time.Sleep(2 * time.Second) // the shard tries while the cache is down
	cache.start()
	eventually(t, 60*time.Second, "the replicas after the outage", func(ctx context.Context) (bool, error) {
		names, err := replicaNames(ctx, replicas, apiExportsGVR)
		return slices.Equal(names, []string{"other.dev"}), err
	})
	// Everything else of the shard is there once.
	all, err := replicaNames(ctx, cacheClient(t, cache.config(), "*", "*"), apiExportsGVR)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	if want := []string{"other.dev", "scheduling.kcp.io", "shards.core.kcp.io", "tenancy.kcp.io", "topology.kcp.io", "workload.kcp.io"}; !slices.Equal(all, want) {
		t.Errorf("exports in the cache: %v, want %v", all, want)
	}
}

// replicate writes obj (YAML) into the embedded cache of s as a replica
// of shard's cluster.
func replicate(t *testing.T, s *framework.Shard, shard string, cluster logicalcluster.Name, gvr schema.GroupVersionResource, manifest string, annotations map[string]string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(annotations)
	obj.SetUID(types.UID(string(cluster) + "-" + obj.GetName()))
	if _, err := cacheClient(t, s.Config(""), shard, cluster.String()).Resource(gvr).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("replicating %s %s: %v", gvr.Resource, obj.GetName(), err)
	}
}

// TestBindingToAnExportOfAnotherShard: an export known only from the
// cache's replicas of another shard (its schema and the RBAC that lets a
// user bind it included) is found by its path, bound, and served; a user
// whom the replicated RBAC does not allow to bind is refused.
func TestBindingToAnExportOfAnotherShard(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "binder-token,binder,u1", "other-token,other,u2"))
	ctx := t.Context()
	remote := logicalcluster.Name("2x9fpq7b3k5mzw1c")
	path := map[string]string{"kcp.io/path": "root:elsewhere"}
	replicate(t, s, "shard-x", remote, apiResourceSchemasGVR, cowboysSchema, path)
	replicate(t, s, "shard-x", remote, apiExportsGVR, cowboysExport+`status:
  identityHash: 5b9dbc0e3c3b2bb1e4a8cf4f0b8b2e7e6f3a6e4c1d3f2a1b0c9d8e7f6a5b4c3d
`, path)
	replicate(t, s, "shard-x", remote, clusterRolesGVR, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: bind-wildwest
rules:
- apiGroups: [apis.kcp.io]
  resources: [apiexports]
  resourceNames: [wildwest.dev]
  verbs: [bind]
`, path)
	replicate(t, s, "shard-x", remote, clusterRoleBindingsGVR, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: binder
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: bind-wildwest}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: binder}
`, path)

	createWorkspace(t, s, logicalcluster.Root, "consumer", nil)
	consumer := logicalcluster.Name(waitWorkspaceReady(t, s, logicalcluster.Root, "consumer").Spec.Cluster)
	for _, u := range []string{"binder", "other"} {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: u + "-admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u}},
		}
		if _, err := kube(t, s, consumer).RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	binding := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboys"},
		Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{
			Path: "root:elsewhere", Name: "wildwest.dev"}}},
	}
	other, err := kcpClientForToken(s, consumer, "other-token")
	if err != nil {
		t.Fatal(err)
	}
	var refusal error
	eventually(t, 30*time.Second, "other's binding refused for want of bind", func(ctx context.Context) (bool, error) {
		_, refusal = other.APIBindings().Create(ctx, binding, metav1.CreateOptions{})
		return apierrors.IsForbidden(refusal), nil
	})
	binder, err := kcpClientForToken(s, consumer, "binder-token")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "binder's binding accepted", func(ctx context.Context) (bool, error) {
		_, err := binder.APIBindings().Create(ctx, binding, metav1.CreateOptions{})
		return err == nil, nil
	})
	b := waitBound(t, s, consumer, "cowboys")
	if b.Status.APIExportClusterName != remote.String() {
		t.Errorf("status.apiExportClusterName = %q, want %s", b.Status.APIExportClusterName, remote)
	}
	s.MustKubectl(t, consumer, "create", "-f", yamlFile(t, "one.yaml", cowboyOne))
	if out := s.MustKubectl(t, consumer, "get", "cowboys", "-o", "name"); strings.TrimSpace(out) != "cowboy.wildwest.dev/one" {
		t.Errorf("kubectl get cowboys: %q", out)
	}
}
