package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	clientv3 "go.etcd.io/etcd/client/v3"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// cowboysSchema is the schema `kubectl kcp crd snapshot --prefix
// v220920-6039d110` makes of cowboysCRD.
const cowboysSchema = `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata:
  name: v220920-6039d110.cowboys.wildwest.dev
spec:
  group: wildwest.dev
  names:
    kind: Cowboy
    listKind: CowboyList
    plural: cowboys
    singular: cowboy
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            intent:
              type: string
        status:
          type: object
          properties:
            result:
              type: string
    subresources:
      status: {}
`

const cowboysExport = `apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata:
  name: wildwest.dev
spec:
  latestResourceSchemas:
  - v220920-6039d110.cowboys.wildwest.dev
`

// seedBinding is the seed quickstart's APIBinding, verbatim: the older
// reference form.
const seedBinding = `apiVersion: apis.kcp.io/v1alpha1
kind: APIBinding
metadata:
  name: cowboys
spec:
  reference:
    workspace:
      path: root:wildwest:cowboys-service
      exportName: wildwest.dev
`

const cowboyOne = `apiVersion: wildwest.dev/v1alpha1
kind: Cowboy
metadata:
  name: one
spec:
  intent: one
`

var cowboysGVR = schema.GroupVersionResource{Group: "wildwest.dev", Version: "v1alpha1", Resource: "cowboys"}

// yamlFile writes content to a file of a test directory.
func yamlFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// publishCowboys makes cluster a provider of the cowboys export and
// returns its identity hash.
func publishCowboys(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) string {
	t.Helper()
	s.MustKubectl(t, cluster, "apply", "-f", yamlFile(t, "schema.yaml", cowboysSchema))
	out := s.MustKubectl(t, cluster, "apply", "-f", yamlFile(t, "export.yaml", cowboysExport))
	if !strings.Contains(out, "apiexport.apis.kcp.io/wildwest.dev created") {
		t.Errorf("kubectl apply of the export: %s", out)
	}
	var hash string
	eventually(t, 30*time.Second, "the export's identity", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, cluster).APIExports().Get(ctx, "wildwest.dev", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		hash = e.Status.IdentityHash
		return hash != "", nil
	})
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(hash) {
		t.Fatalf("status.identityHash %q is not a hex SHA-256", hash)
	}
	return hash
}

// waitBound waits until a binding is Bound and returns it.
func waitBound(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, name string) *apisv1alpha1.APIBinding {
	t.Helper()
	var b *apisv1alpha1.APIBinding
	eventually(t, 30*time.Second, "APIBinding "+name+" to be Bound", func(ctx context.Context) (bool, error) {
		var err error
		b, err = kcpClient(t, s, cluster).APIBindings().Get(ctx, name, metav1.GetOptions{})
		return err == nil && b.Status.Phase == apisv1alpha1.APIBindingPhaseBound, err
	})
	return b
}

// TestAPIBindingQuickstart plays the seed's "publish" and "consume"
// transcript with the real kubectl: the provider's export gets an
// identity, the seed's binding YAML (older reference form) binds it, the
// resource shows in discovery and kubectl explain, a Cowboy is created,
// and it is stored under the export's identity.
func TestAPIBindingQuickstart(t *testing.T) {
	s := framework.StartShard(t)
	createWorkspace(t, s, logicalcluster.Root, "wildwest", nil)
	provider := createWorkspace(t, s, "root:wildwest", "cowboys-service", nil)
	consumer := createWorkspace(t, s, logicalcluster.Root, "consumer", nil)
	providerPath := logicalcluster.Name("root:wildwest:cowboys-service")
	consumerPath := logicalcluster.Name("root:consumer")

	hash := publishCowboys(t, s, providerPath)
	out := s.MustKubectl(t, providerPath, "get", "apiexport", "wildwest.dev", "-o", "yaml")
	if !strings.Contains(out, "identityHash: "+hash) || !strings.Contains(out, "name: wildwest.dev") {
		t.Errorf("kubectl get apiexport -o yaml:\n%s", out)
	}
	eventually(t, 30*time.Second, "the export's virtual workspace URL", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, providerPath).APIExports().Get(ctx, "wildwest.dev", metav1.GetOptions{})
		return err == nil && len(e.Status.VirtualWorkspaces) == 1 &&
			e.Status.VirtualWorkspaces[0].URL == s.URL+"/services/apiexport/root:wildwest:cowboys-service/wildwest.dev", err
	})
	out = s.MustKubectl(t, providerPath, "get", "secret", "-n", "kcp-system", "wildwest.dev", "-o", "jsonpath={.data.key}")
	if out == "" {
		t.Errorf("the generated identity secret kcp-system/wildwest.dev has no key")
	}

	out = s.MustKubectl(t, consumerPath, "apply", "-f", yamlFile(t, "binding.yaml", seedBinding))
	if !strings.Contains(out, "apibinding.apis.kcp.io/cowboys created") {
		t.Errorf("kubectl apply of the seed's binding: %s", out)
	}
	b := waitBound(t, s, consumerPath, "cowboys")
	if ref := b.Spec.Reference; ref.Workspace != nil || ref.Export == nil || ref.Export.Path != "root:wildwest:cowboys-service" || ref.Export.Name != "wildwest.dev" {
		t.Errorf("the older reference form was not converted: %+v", ref)
	}
	if b.Status.APIExportClusterName != provider.Spec.Cluster {
		t.Errorf("status.apiExportClusterName = %q, want the provider's cluster %q", b.Status.APIExportClusterName, provider.Spec.Cluster)
	}
	if len(b.Status.BoundResources) != 1 || b.Status.BoundResources[0].Resource != "cowboys" ||
		b.Status.BoundResources[0].Schema.IdentityHash != hash || b.Status.BoundResources[0].Schema.Name != "v220920-6039d110.cowboys.wildwest.dev" {
		t.Errorf("status.boundResources: %+v", b.Status.BoundResources)
	}

	out = s.MustKubectl(t, consumerPath, "api-resources")
	if !regexp.MustCompile(`(?m)^cowboys\s+wildwest.dev/v1alpha1\s+true\s+Cowboy$`).MatchString(out) {
		t.Errorf("kubectl api-resources has no cowboys line:\n%s", out)
	}
	out = s.MustKubectl(t, consumerPath, "explain", "cowboys.spec")
	if !strings.Contains(out, "intent") {
		t.Errorf("kubectl explain cowboys.spec:\n%s", out)
	}
	out = s.MustKubectl(t, consumerPath, "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))
	if !strings.Contains(out, "cowboy.wildwest.dev/one created") {
		t.Errorf("kubectl apply of a Cowboy: %s", out)
	}
	out = s.MustKubectl(t, consumerPath, "get", "cowboys", "one", "-o", "jsonpath={.spec.intent}")
	if out != "one" {
		t.Errorf("the Cowboy's spec.intent: %q", out)
	}
	// Validation by the schema.
	if out, err := s.Kubectl(consumerPath, "patch", "cowboy", "one", "--type=merge", "-p", `{"spec":{"intent":5}}`); err == nil || !strings.Contains(out, "spec.intent") {
		t.Errorf("a Cowboy with a numeric intent was accepted: %v\n%s", err, out)
	}

	// The object is stored under the export's identity.
	etcd := shardEtcd(t, s)
	key := "/registry/wildwest.dev/cowboys/" + hash + "/" + consumer.Spec.Cluster + "/default/one"
	resp, err := etcd.Get(t.Context(), key, clientv3.WithKeysOnly())
	if err != nil || len(resp.Kvs) != 1 {
		keys, _ := clusterKeys(t.Context(), etcd, logicalcluster.Name(consumer.Spec.Cluster))
		t.Errorf("the Cowboy is not stored at %s: %v; the consumer's keys: %v", key, err, keys)
	}
	// The provider finds the virtual workspace of its export through an
	// APIExportEndpointSlice, and sees the consumer's Cowboy there.
	s.MustKubectl(t, providerPath, "apply", "-f", yamlFile(t, "slice.yaml", `kind: APIExportEndpointSlice
apiVersion: apis.kcp.io/v1alpha1
metadata:
  name: cowboys
spec:
  export:
    path: root:wildwest:cowboys-service
    name: wildwest.dev
`))
	endpoint := s.URL + "/services/apiexport/root:wildwest:cowboys-service/wildwest.dev"
	eventually(t, 30*time.Second, "the endpoint slice's endpoints", func(ctx context.Context) (bool, error) {
		sl, err := kcpClient(t, s, providerPath).APIExportEndpointSlices().Get(ctx, "cowboys", metav1.GetOptions{})
		return err == nil && len(sl.Status.APIExportEndpoints) == 1 && sl.Status.APIExportEndpoints[0].URL == endpoint, err
	})
	vw := endpoint + "/clusters/*"
	out = s.MustKubectl(t, providerPath, "--server", vw, "api-resources")
	if !regexp.MustCompile(`(?m)^cowboys\s+wildwest.dev/v1alpha1\s+true\s+Cowboy$`).MatchString(out) {
		t.Errorf("kubectl api-resources in the virtual workspace:\n%s", out)
	}
	out = s.MustKubectl(t, providerPath, "--server", vw, "get", "cowboys", "-A", "-o", `custom-columns=WORKSPACE:.metadata.annotations.kcp\.io/cluster,NAME:.metadata.name`)
	if !regexp.MustCompile(`(?m)^` + consumer.Spec.Cluster + `\s+one$`).MatchString(out) {
		t.Errorf("kubectl get cowboys -A in the virtual workspace:\n%s", out)
	}
	// Writes go to one consumer, by its logical cluster.
	consumerVW := s.URL + "/services/apiexport/root:wildwest:cowboys-service/wildwest.dev/clusters/" + consumer.Spec.Cluster
	s.MustKubectl(t, providerPath, "--server", consumerVW, "patch", "cowboy", "one", "--subresource=status", "--type=merge", "-p", `{"status":{"result":"roped"}}`)
	if out := s.MustKubectl(t, consumerPath, "get", "cowboy", "one", "-o", "jsonpath={.status.result}"); out != "roped" {
		t.Errorf("the status the provider wrote: %q", out)
	}
	// kubectl validates and explains with the virtual workspace's OpenAPI.
	out = s.MustKubectl(t, providerPath, "--server", vw, "explain", "cowboys.spec")
	if !strings.Contains(out, "intent") {
		t.Errorf("kubectl explain in the virtual workspace:\n%s", out)
	}
	two := strings.Replace(cowboyOne, "name: one", "name: two", 1)
	out = s.MustKubectl(t, providerPath, "--server", consumerVW, "create", "-f", yamlFile(t, "two.yaml", two))
	if !strings.Contains(out, "cowboy.wildwest.dev/two created") {
		t.Errorf("kubectl create through the virtual workspace: %s", out)
	}
	// Nothing else of the consumer is reachable.
	if out, err := s.Kubectl(providerPath, "--server", consumerVW, "get", "configmaps"); err == nil {
		t.Errorf("configmaps through the virtual workspace:\n%s", out)
	}

	// Across all clusters, the shard admin's kubectl lists the Cowboys of
	// the only export that binds them.
	out = s.MustKubectl(t, logicalcluster.Wildcard, "get", "cowboys", "-A", "-o", `custom-columns=WORKSPACE:.metadata.annotations.kcp\.io/cluster,NAME:.metadata.name`)
	if !regexp.MustCompile(`(?m)^` + consumer.Spec.Cluster + `\s+one$`).MatchString(out) {
		t.Errorf("kubectl get cowboys -A at /clusters/*:\n%s", out)
	}

	// The provider itself does not serve the resource.
	if out, err := s.Kubectl(providerPath, "get", "cowboys"); err == nil {
		t.Errorf("the provider serves cowboys without a binding:\n%s", out)
	}
}

// TestAPIBindingIdentities: two providers export the same group/resource;
// each consumer sees only the objects of its own binding, stored under
// its export's identity.
func TestAPIBindingIdentities(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"provider-a", "provider-b", "consumer-a", "consumer-b"} {
		createCluster(t, s, c)
	}
	hashA := publishCowboys(t, s, "provider-a")
	hashB := publishCowboys(t, s, "provider-b")
	if hashA == hashB {
		t.Fatalf("two exports have the same identity %s", hashA)
	}
	for consumer, provider := range map[logicalcluster.Name]string{"consumer-a": "provider-a", "consumer-b": "provider-b"} {
		createBinding(t, s, consumer, "cowboys", provider, "wildwest.dev")
		waitBound(t, s, consumer, "cowboys")
	}
	dynA, dynB := dynamicClient(t, s, "consumer-a"), dynamicClient(t, s, "consumer-b")
	for _, c := range []struct {
		client dynamic.Interface
		name   string
	}{{dynA, "only-a"}, {dynB, "only-b"}} {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "wildwest.dev/v1alpha1", "kind": "Cowboy",
			"metadata": map[string]any{"name": c.name}, "spec": map[string]any{"intent": c.name},
		}}
		if _, err := c.client.Resource(cowboysGVR).Namespace("default").Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		client dynamic.Interface
		want   string
	}{{dynA, "only-a"}, {dynB, "only-b"}} {
		list, err := c.client.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].GetName() != c.want {
			t.Errorf("listing cowboys: %v, want only %s", names(list.Items), c.want)
		}
	}
	// Across all clusters, <resource>:<identity> lists the objects of one
	// export's bindings, with their clusters; an export without bindings
	// lists nothing rather than failing.
	wildcard := dynamicClient(t, s, logicalcluster.Wildcard)
	for hash, want := range map[string]string{hashA: "consumer-a/only-a", hashB: "consumer-b/only-b"} {
		gvr := cowboysGVR
		gvr.Resource += ":" + hash
		list, err := wildcard.Resource(gvr).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing %s across all clusters: %v", gvr.Resource, err)
		}
		var got []string
		for _, o := range list.Items {
			got = append(got, logicalcluster.From(&o).String()+"/"+o.GetName())
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("cowboys of identity %s across all clusters: %v, want %s", hash, got, want)
		}
	}
	createCluster(t, s, "provider-c")
	hashC := publishCowboys(t, s, "provider-c")
	gvr := cowboysGVR
	gvr.Resource += ":" + hashC
	if list, err := wildcard.Resource(gvr).List(t.Context(), metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("an export without bindings: %v %v", err, list)
	}
	// Through each provider's virtual workspace.
	for provider, want := range map[logicalcluster.Name]string{"provider-a": "consumer-a/only-a", "provider-b": "consumer-b/only-b", "provider-c": ""} {
		cfg := s.Config("")
		cfg.Host = s.URL + "/services/apiexport/" + string(provider) + "/wildwest.dev/clusters/*"
		vw, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		list, err := vw.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing cowboys in the virtual workspace of %s: %v", provider, err)
		}
		var got []string
		for _, o := range list.Items {
			got = append(got, logicalcluster.From(&o).String()+"/"+o.GetName())
		}
		if strings.Join(got, ",") != want {
			t.Errorf("the virtual workspace of %s lists %v, want %q", provider, got, want)
		}
		// A watch answers at once, before any event.
		start := time.Now()
		watchCtx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		w, err := vw.Resource(cowboysGVR).Watch(watchCtx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			t.Fatalf("watching cowboys in the virtual workspace of %s: %v", provider, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a watch in the virtual workspace of %s answered after %v", provider, d)
		}
		w.Stop()
		cancel()
	}
	// One cluster's objects of another identity are not reachable.
	gvr.Resource = "cowboys:" + hashB
	if _, err := dynA.Resource(gvr).Namespace("default").Get(t.Context(), "only-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("consumer-a's cowboy through identity B: %v", err)
	}
	gvr.Resource = "cowboys:" + hashA
	if _, err := dynA.Resource(gvr).Namespace("default").Get(t.Context(), "only-a", metav1.GetOptions{}); err != nil {
		t.Errorf("consumer-a's cowboy through its identity: %v", err)
	}

	etcd := shardEtcd(t, s)
	for hash, want := range map[string]string{hashA: "only-a", hashB: "only-b"} {
		resp, err := etcd.Get(t.Context(), "/registry/wildwest.dev/cowboys/"+hash+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 || !strings.HasSuffix(string(resp.Kvs[0].Key), "/default/"+want) {
			t.Errorf("keys under identity %s: %v, want only %s", hash, resp.Kvs, want)
		}
	}
}

// TestAPIBindingPermissionAndConflicts: binding needs verb bind on the
// export; a binding that clashes with a CRD or another binding reports
// the conflict; deleting a binding deletes its objects and stops serving.
func TestAPIBindingPermissionAndConflicts(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "alice-token,alice,alice-uid"))
	for _, c := range []logicalcluster.Name{"provider", "other-provider", "consumer", "crd-consumer"} {
		createCluster(t, s, c)
	}
	publishCowboys(t, s, "provider")
	publishCowboys(t, s, "other-provider")

	// alice administers the consumer but may not bind the export.
	bindClusterRole(t, s, "consumer", "", "alice-admin", "cluster-admin", authzUser("alice"))
	aliceBinding := `apiVersion: apis.kcp.io/v1alpha1
kind: APIBinding
metadata:
  name: cowboys
spec:
  reference:
    export:
      path: provider
      name: wildwest.dev
`
	file := yamlFile(t, "alice.yaml", aliceBinding)
	out, err := kubectlAs(t, s, "consumer", "alice-token", "create", "-f", file)
	if err == nil || !strings.Contains(out, "no permission to bind to export provider:wildwest.dev") {
		t.Fatalf("alice bound without the bind verb: %v\n%s", err, out)
	}
	// The same refusal for an export that does not exist.
	missing := strings.Replace(aliceBinding, "name: wildwest.dev", "name: nothing.dev", 1)
	out, err = kubectlAs(t, s, "consumer", "alice-token", "create", "-f", yamlFile(t, "missing.yaml", missing))
	if err == nil || !strings.Contains(out, "no permission to bind to export provider:nothing.dev") {
		t.Errorf("binding a missing export: %v\n%s", err, out)
	}
	// The provider lets alice bind.
	binder := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "bind-wildwest"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports"}, ResourceNames: []string{"wildwest.dev"}, Verbs: []string{"bind"}}},
	}
	if _, err := kube(t, s, "provider").RbacV1().ClusterRoles().Create(t.Context(), binder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, s, "provider", "", "alice-binds", "bind-wildwest", authzUser("alice"))
	eventuallyAllowed(t, "alice binds", func(ctx context.Context) error {
		_, err := kubectlAs(t, s, "consumer", "alice-token", "create", "-f", file)
		return err
	})
	waitBound(t, s, "consumer", "cowboys")

	// alice may not read the provider's virtual workspace until the
	// provider grants her the content of its export.
	vwConfig := tokenConfig(s, "", "alice-token")
	vwConfig.Host = s.URL + "/services/apiexport/provider/wildwest.dev/clusters/*"
	aliceVW, err := dynamic.NewForConfig(vwConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := aliceVW.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice listed the export's content without permission: %v", err)
	}
	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "read-wildwest"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports/content"}, ResourceNames: []string{"wildwest.dev"}, Verbs: []string{"list", "watch"}}},
	}
	if _, err := kube(t, s, "provider").RbacV1().ClusterRoles().Create(t.Context(), reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, s, "provider", "", "alice-reads", "read-wildwest", authzUser("alice"))
	eventuallyAllowed(t, "alice lists the export's content", func(ctx context.Context) error {
		_, err := aliceVW.Resource(cowboysGVR).List(ctx, metav1.ListOptions{})
		return err
	})
	// Listing is not writing.
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "wildwest.dev/v1alpha1", "kind": "Cowboy", "metadata": map[string]any{"name": "x"}}}
	vwConfig.Host = s.URL + "/services/apiexport/provider/wildwest.dev/clusters/consumer"
	aliceConsumer, err := dynamic.NewForConfig(vwConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := aliceConsumer.Resource(cowboysGVR).Namespace("default").Create(t.Context(), obj, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice created through the virtual workspace with list and watch only: %v", err)
	}

	// A CRD of a bound resource is refused.
	out, err = s.Kubectl("consumer", "apply", "-f", yamlFile(t, "crd.yaml", cowboysCRD))
	if err == nil || !strings.Contains(out, "cowboys.wildwest.dev is already served by APIBinding cowboys") {
		t.Errorf("a CRD of a bound resource: %v\n%s", err, out)
	}

	// A second binding of the same resource through another export.
	createBinding(t, s, "consumer", "other-cowboys", "other-provider", "wildwest.dev")
	eventually(t, 30*time.Second, "the second binding to report the conflict", func(ctx context.Context) (bool, error) {
		b, err := kcpClient(t, s, "consumer").APIBindings().Get(ctx, "other-cowboys", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := conditionsv1alpha1.Get(b, apisv1alpha1.BindingUpToDate)
		return b.Status.Phase == apisv1alpha1.APIBindingPhaseBinding && c != nil && c.Reason == apisv1alpha1.NamingConflictsReason &&
			strings.Contains(c.Message, "conflicts with APIBinding cowboys"), nil
	})

	// A CRD of the same name in another consumer.
	s.MustKubectl(t, "crd-consumer", "apply", "-f", yamlFile(t, "crd.yaml", cowboysCRD))
	createBinding(t, s, "crd-consumer", "cowboys", "provider", "wildwest.dev")
	eventually(t, 30*time.Second, "the binding to report the CRD conflict", func(ctx context.Context) (bool, error) {
		b, err := kcpClient(t, s, "crd-consumer").APIBindings().Get(ctx, "cowboys", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := conditionsv1alpha1.Get(b, apisv1alpha1.BindingUpToDate)
		return c != nil && c.Reason == apisv1alpha1.NamingConflictsReason && strings.Contains(c.Message, "CustomResourceDefinition cowboys.wildwest.dev"), nil
	})

	// Deleting the binding deletes its objects, then the resource is gone.
	s.MustKubectl(t, "consumer", "delete", "apibinding", "other-cowboys")
	s.MustKubectl(t, "consumer", "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))
	consumerWatch, err := dynamicClient(t, s, "consumer").Resource(cowboysGVR).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer consumerWatch.Stop()
	s.MustKubectl(t, "consumer", "delete", "apibinding", "cowboys", "--wait=true", "--timeout=60s")
	// The consumer's open watch ends with its binding.
	func() {
		deadline := time.After(30 * time.Second)
		for {
			select {
			case _, open := <-consumerWatch.ResultChan():
				if !open {
					return
				}
			case <-deadline:
				t.Error("a watch of cowboys outlived the binding")
				return
			}
		}
	}()
	eventually(t, 30*time.Second, "cowboys to stop being served", func(ctx context.Context) (bool, error) {
		_, err := dynamicClient(t, s, "consumer").Resource(cowboysGVR).List(ctx, metav1.ListOptions{})
		return apierrors.IsNotFound(err), nil
	})
	keys, err := clusterKeys(t.Context(), shardEtcd(t, s), "consumer")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, "/cowboys/") {
			t.Errorf("a Cowboy outlived its binding: %s", k)
		}
	}
	// Another export's cowboys may be bound now.
	createBinding(t, s, "consumer", "other-cowboys", "other-provider", "wildwest.dev")
	waitBound(t, s, "consumer", "other-cowboys")
	// Served a moment after Bound (the shard follows the binding's status).
	var list *unstructured.UnstructuredList
	eventually(t, 10*time.Second, "cowboys of the other export served", func(ctx context.Context) (bool, error) {
		list, err = dynamicClient(t, s, "consumer").Resource(cowboysGVR).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if len(list.Items) != 0 {
		t.Errorf("cowboys of the other export: %v", names(list.Items))
	}
}

// createBinding creates an APIBinding as the shard admin.
func createBinding(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, name, path, export string) {
	t.Helper()
	b := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: path, Name: export}}},
	}
	if _, err := kcpClient(t, s, cluster).APIBindings().Create(t.Context(), b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating APIBinding %s in %s: %v", name, cluster, err)
	}
}

func dynamicClient(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(items []unstructured.Unstructured) []string {
	out := make([]string, 0, len(items))
	for _, o := range items {
		out = append(out, o.GetName())
	}
	return out
}

// TestAPIBindingMaximalPermissionPolicy: an export with a local maximal
// permission policy bounds what a consumer's admin may do with the bound
// resource to what the provider's RBAC grants the prefixed user and
// groups.
func TestAPIBindingMaximalPermissionPolicy(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "alice-token,alice,alice-uid"))
	for _, c := range []logicalcluster.Name{"provider", "consumer"} {
		createCluster(t, s, c)
	}
	s.MustKubectl(t, "provider", "apply", "-f", yamlFile(t, "schema.yaml", cowboysSchema))
	s.MustKubectl(t, "provider", "apply", "-f", yamlFile(t, "export.yaml", cowboysExport+`  maximalPermissionPolicy:
    local: {}
`))
	// The provider lets every consumer user read cowboys, and nothing more.
	readers := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboy-readers"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"wildwest.dev"}, Resources: []string{"cowboys"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := kube(t, s, "provider").RbacV1().ClusterRoles().Create(t.Context(), readers, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, s, "provider", "", "cowboy-readers", "cowboy-readers", authzGroup("apis.kcp.io:binding:system:authenticated"))
	createBinding(t, s, "consumer", "cowboys", "provider", "wildwest.dev")
	waitBound(t, s, "consumer", "cowboys")
	s.MustKubectl(t, "consumer", "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))

	// alice is cluster-admin in the consumer.
	bindClusterRole(t, s, "consumer", "", "alice-admin", "cluster-admin", authzUser("alice"))
	eventuallyAllowed(t, "alice reads cowboys", func(ctx context.Context) error {
		_, err := kubectlAs(t, s, "consumer", "alice-token", "get", "cowboys")
		return err
	})
	out, err := kubectlAs(t, s, "consumer", "alice-token", "delete", "cowboy", "one")
	if err == nil || !strings.Contains(out, "maximal permission policy") {
		t.Errorf("alice deleted a cowboy the provider's policy does not allow: %v\n%s", err, out)
	}
	// Everything else in the consumer stays alice's.
	if out, err := kubectlAs(t, s, "consumer", "alice-token", "create", "configmap", "mine"); err != nil {
		t.Errorf("alice creating a configmap: %v\n%s", err, out)
	}
	// The provider widens its policy.
	writers := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboy-writers"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"wildwest.dev"}, Resources: []string{"cowboys"}, Verbs: []string{"delete"}}},
	}
	if _, err := kube(t, s, "provider").RbacV1().ClusterRoles().Create(t.Context(), writers, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, s, "provider", "", "cowboy-writers", "cowboy-writers", authzUser("apis.kcp.io:binding:alice"))
	eventuallyAllowed(t, "alice deletes the cowboy", func(ctx context.Context) error {
		_, err := kubectlAs(t, s, "consumer", "alice-token", "delete", "cowboy", "one")
		return err
	})
}

// TestAPIBindingPermissionClaims: the export claims configmaps (all) and
// one secret by name; through the virtual workspace the provider sees the
// claimed objects of the consumer that accepts the claims and nothing of
// the one that rejects them, and a revoked claim cuts access at once, also
// on an open watch.
func TestAPIBindingPermissionClaims(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"provider", "accepts", "rejects"} {
		createCluster(t, s, c)
	}
	s.MustKubectl(t, "provider", "apply", "-f", yamlFile(t, "schema.yaml", cowboysSchema))
	s.MustKubectl(t, "provider", "apply", "-f", yamlFile(t, "export.yaml", cowboysExport+`  permissionClaims:
  - group: ""
    resource: configmaps
    all: true
  - group: ""
    resource: secrets
    resourceSelector:
    - namespace: default
      name: shared
`))
	claims := func(state string) string {
		return `apiVersion: apis.kcp.io/v1alpha1
kind: APIBinding
metadata:
  name: cowboys
spec:
  reference:
    export:
      path: provider
      name: wildwest.dev
  permissionClaims:
  - group: ""
    resource: configmaps
    all: true
    state: ` + state + `
  - group: ""
    resource: secrets
    resourceSelector:
    - namespace: default
      name: shared
    state: Accepted
`
	}
	eventually(t, 30*time.Second, "the export's identity", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, "provider").APIExports().Get(ctx, "wildwest.dev", metav1.GetOptions{})
		return err == nil && e.Status.IdentityHash != "", err
	})
	s.MustKubectl(t, "accepts", "apply", "-f", yamlFile(t, "accepts.yaml", claims("Accepted")))
	s.MustKubectl(t, "rejects", "apply", "-f", yamlFile(t, "rejects.yaml", claims("Rejected")))
	for _, c := range []logicalcluster.Name{"accepts", "rejects"} {
		b := waitBound(t, s, c, "cowboys")
		if c == "accepts" && len(b.Status.AppliedPermissionClaims) != 2 {
			t.Errorf("applied claims of the accepting binding: %+v", b.Status.AppliedPermissionClaims)
		}
		s.MustKubectl(t, c, "create", "configmap", "cm", "--from-literal=a=b")
		s.MustKubectl(t, c, "create", "secret", "generic", "shared", "--from-literal=a=b")
		s.MustKubectl(t, c, "create", "secret", "generic", "private", "--from-literal=a=b")
	}

	vw := s.URL + "/services/apiexport/provider/wildwest.dev/clusters/"
	out := s.MustKubectl(t, "provider", "--server", vw+"*", "api-resources")
	for _, line := range []string{`(?m)^configmaps\s+cm\s+v1\s+true\s+ConfigMap$`, `(?m)^secrets\s+v1\s+true\s+Secret$`, `(?m)^cowboys\s+wildwest.dev/v1alpha1\s+true\s+Cowboy$`} {
		if !regexp.MustCompile(line).MatchString(out) {
			t.Errorf("kubectl api-resources in the virtual workspace has no line %s:\n%s", line, out)
		}
	}
	list := func(resource string) []string {
		t.Helper()
		out := s.MustKubectl(t, "provider", "--server", vw+"*", "get", resource, "-A", "--no-headers", "-o", `custom-columns=C:.metadata.annotations.kcp\.io/cluster,N:.metadata.name`)
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			if len(f) == 2 && f[1] != "kube-root-ca.crt" {
				got = append(got, f[0]+"/"+f[1])
			}
		}
		return got
	}
	if got := list("configmaps"); strings.Join(got, ",") != "accepts/cm" {
		t.Errorf("claimed configmaps: %v, want only accepts/cm", got)
	}
	if got := list("secrets"); strings.Join(got, ",") != "accepts/shared,rejects/shared" {
		t.Errorf("claimed secrets: %v, want the shared ones of both (both accept that claim)", got)
	}
	if out, err := s.Kubectl("provider", "--server", vw+"rejects", "get", "configmap", "cm"); err == nil {
		t.Errorf("a configmap of the rejecting consumer:\n%s", out)
	}
	if out, err := s.Kubectl("provider", "--server", vw+"accepts", "get", "secret", "private"); err == nil {
		t.Errorf("a secret the claim does not select:\n%s", out)
	}
	s.MustKubectl(t, "provider", "--server", vw+"accepts", "label", "configmap", "cm", "touched=yes")

	// A watch across consumers, then the claim is revoked.
	cfg := s.Config("")
	cfg.Host = vw + "*"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	initial, err := dyn.Resource(configmaps).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := dyn.Resource(configmaps).Watch(t.Context(), metav1.ListOptions{ResourceVersion: initial.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	s.MustKubectl(t, "accepts", "label", "configmap", "cm", "before=revocation")
	select {
	case ev := <-w.ResultChan():
		if o, ok := ev.Object.(*unstructured.Unstructured); !ok || o.GetLabels()["before"] != "revocation" {
			t.Errorf("first watch event: %v %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event for the accepting consumer's configmap")
	}
	s.MustKubectl(t, "accepts", "apply", "-f", yamlFile(t, "revoke.yaml", claims("Rejected")))
	eventually(t, 10*time.Second, "the revoked claim to hide the configmap", func(ctx context.Context) (bool, error) {
		return len(list("configmaps")) == 0, nil
	})
	s.MustKubectl(t, "accepts", "label", "configmap", "cm", "after=revocation")
	select {
	case ev := <-w.ResultChan():
		if o, ok := ev.Object.(*unstructured.Unstructured); ok && o.GetLabels()["after"] == "revocation" {
			t.Errorf("the open watch saw a change after the claim was revoked")
		}
	case <-time.After(2 * time.Second):
	}
}

// TestAPIExportVirtualWorkspaceInformer: a client-go informer on the
// virtual workspace URL of an export, across 100 consumer clusters,
// receives every create, update and delete of the bound resource.
func TestAPIExportVirtualWorkspaceInformer(t *testing.T) {
	const consumers = 100
	s := framework.StartShard(t)
	createCluster(t, s, "provider")
	publishCowboys(t, s, "provider")
	names := make([]logicalcluster.Name, consumers)
	for i := range names {
		names[i] = logicalcluster.Name(fmt.Sprintf("consumer-%03d", i))
		createCluster(t, s, names[i])
		createBinding(t, s, names[i], "cowboys", "provider", "wildwest.dev")
	}
	for _, c := range names {
		waitBound(t, s, c, "cowboys")
	}

	cfg := s.Config("")
	cfg.Host = s.URL + "/services/apiexport/provider/wildwest.dev/clusters/*"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]map[string]int{"add": {}, "update": {}, "delete": {}}
	record := func(kind string, obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen[kind][logicalcluster.From(u).String()+"/"+u.GetName()]++
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	informer := factory.ForResource(cowboysGVR).Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", obj) },
		UpdateFunc: func(_, obj any) { record("update", obj) },
		DeleteFunc: func(obj any) { record("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	count := func(kind string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen[kind])
	}
	clients := make([]dynamic.ResourceInterface, consumers)
	for i, c := range names {
		clients[i] = dynamicClient(t, s, c).Resource(cowboysGVR).Namespace("default")
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "wildwest.dev/v1alpha1", "kind": "Cowboy",
			"metadata": map[string]any{"name": string(c)}, "spec": map[string]any{"intent": "ride"},
		}}
		if _, err := clients[i].Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "an add event per consumer", func(context.Context) (bool, error) { return count("add") == consumers, nil })
	for i, c := range names {
		if _, err := clients[i].Patch(t.Context(), string(c), types.MergePatchType, []byte(`{"spec":{"intent":"rest"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "an update event per consumer", func(context.Context) (bool, error) { return count("update") == consumers, nil })
	for i, c := range names {
		if err := clients[i].Delete(t.Context(), string(c), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "a delete event per consumer", func(context.Context) (bool, error) { return count("delete") == consumers, nil })
	mu.Lock()
	defer mu.Unlock()
	for kind, byObject := range seen {
		for obj, n := range byObject {
			if !strings.HasSuffix(obj, "/"+strings.SplitN(obj, "/", 2)[0]) {
				t.Errorf("%s event of %s: the object is named after another consumer", kind, obj)
			}
			if kind != "update" && n != 1 {
				t.Errorf("%d %s events of %s", n, kind, obj)
			}
		}
	}
}

// TestWorkspaceTypeDefaultAPIBindings: a workspace of a type with
// defaultAPIBindings (here through a type it extends) becomes Ready only
// once its default bindings are Bound, and serves their resources then; a
// default binding to an export that does not exist keeps it initializing.
func TestWorkspaceTypeDefaultAPIBindings(t *testing.T) {
	s := framework.StartShard(t)
	createWorkspace(t, s, logicalcluster.Root, "wildwest", nil)
	createWorkspace(t, s, "root:wildwest", "cowboys-service", nil)
	publishCowboys(t, s, "root:wildwest:cowboys-service")
	types := `apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata:
  name: ranch
spec:
  defaultAPIBindings:
  - path: root:wildwest:cowboys-service
    export: wildwest.dev
---
apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata:
  name: big-ranch
spec:
  extend:
    with:
    - name: ranch
      path: root
    - name: universal
      path: root
---
apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata:
  name: ghost-ranch
spec:
  defaultAPIBindings:
  - path: root:wildwest:cowboys-service
    export: ghost.dev
`
	// The export claims the consumers' configmaps; a default binding
	// accepts the claim, as kcp's apibinder does.
	s.MustKubectl(t, "root:wildwest:cowboys-service", "patch", "apiexports.v1alpha1.apis.kcp.io", "wildwest.dev", "--type=merge", "-p",
		`{"spec":{"permissionClaims":[{"group":"","resource":"configmaps","all":true}]}}`)
	s.MustKubectl(t, logicalcluster.Root, "apply", "-f", yamlFile(t, "types.yaml", types))
	ws := createWorkspace(t, s, logicalcluster.Root, "farm", &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "big-ranch"})
	b, err := kcpClient(t, s, logicalcluster.Name(ws.Spec.Cluster)).APIBindings().Get(t.Context(), "wildwest.dev", metav1.GetOptions{})
	if err != nil || b.Status.Phase != apisv1alpha1.APIBindingPhaseBound {
		t.Fatalf("the default binding of a Ready workspace: %v %+v", err, b)
	}
	if c := b.Spec.PermissionClaims; len(c) != 1 || c[0].Resource != "configmaps" || !c[0].All || c[0].State != apisv1alpha1.ClaimAccepted {
		t.Errorf("the default binding's answers to the export's claims: %+v", c)
	}
	eventually(t, 30*time.Second, "the accepted claim applied", func(ctx context.Context) (bool, error) {
		b, err := kcpClient(t, s, logicalcluster.Name(ws.Spec.Cluster)).APIBindings().Get(ctx, "wildwest.dev", metav1.GetOptions{})
		return err == nil && len(b.Status.AppliedPermissionClaims) == 1, err
	})
	s.MustKubectl(t, "root:farm", "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))
	if out := strings.TrimSpace(s.MustKubectl(t, "root:farm", "get", "namespace", "default", "-o", "name")); out != "namespace/default" {
		t.Errorf("the universal initializer of the extended type did not run: %q", out)
	}

	ghost := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ghost"},
		Spec: tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "ghost-ranch"}}}
	if _, err := kcpClient(t, s, logicalcluster.Root).Workspaces().Create(t.Context(), ghost, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the ghost workspace to wait for its default binding", func(ctx context.Context) (bool, error) {
		w, err := kcpClient(t, s, logicalcluster.Root).Workspaces().Get(ctx, "ghost", metav1.GetOptions{})
		return err == nil && w.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing &&
			slices.Contains(w.Status.Initializers, corev1alpha1.APIBindingsInitializer), err
	})
	time.Sleep(2 * time.Second)
	w, err := kcpClient(t, s, logicalcluster.Root).Workspaces().Get(t.Context(), "ghost", metav1.GetOptions{})
	if err != nil || w.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
		t.Errorf("a workspace whose default binding cannot bind became Ready: %v", err)
	}

	// The export appears, with a claim: the binding made without it
	// answers the claim, binds, and the workspace becomes Ready.
	s.MustKubectl(t, "root:wildwest:cowboys-service", "apply", "-f", yamlFile(t, "ghost.yaml",
		"apiVersion: apis.kcp.io/v1alpha1\nkind: APIExport\nmetadata:\n  name: ghost.dev\nspec:\n  permissionClaims:\n  - {group: \"\", resource: configmaps, all: true}\n"))
	eventually(t, 60*time.Second, "the ghost workspace Ready once its export exists", func(ctx context.Context) (bool, error) {
		w, err := kcpClient(t, s, logicalcluster.Root).Workspaces().Get(ctx, "ghost", metav1.GetOptions{})
		return err == nil && w.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, err
	})
	w, err = kcpClient(t, s, logicalcluster.Root).Workspaces().Get(t.Context(), "ghost", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gb, err := kcpClient(t, s, logicalcluster.Name(w.Spec.Cluster)).APIBindings().Get(t.Context(), "ghost.dev", metav1.GetOptions{})
	if err != nil || len(gb.Spec.PermissionClaims) != 1 || gb.Spec.PermissionClaims[0].State != apisv1alpha1.ClaimAccepted {
		t.Errorf("the ghost workspace's default binding: %v %+v", err, gb)
	}
}

// TestAPIBindingFollowsLatestSchemas: pointing the export at a new schema
// changes what every binding serves, keeping the objects.
func TestAPIBindingFollowsLatestSchemas(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"provider", "consumer"} {
		createCluster(t, s, c)
	}
	publishCowboys(t, s, "provider")
	createBinding(t, s, "consumer", "cowboys", "provider", "wildwest.dev")
	waitBound(t, s, "consumer", "cowboys")
	s.MustKubectl(t, "consumer", "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))

	v2 := strings.Replace(cowboysSchema, "v220920-6039d110.", "v221001-aaaaaaaa.", 1)
	v2 = strings.Replace(v2, "            intent:\n              type: string\n", "            intent:\n              type: string\n            horse:\n              type: string\n              default: silver\n", 1)
	s.MustKubectl(t, "provider", "apply", "-f", yamlFile(t, "v2.yaml", v2))
	// latestResourceSchemas is a field of v1alpha1; discovery prefers
	// v1alpha2 (as kcp's), whose spec.resources holds it.
	s.MustKubectl(t, "provider", "patch", "apiexports.v1alpha1.apis.kcp.io", "wildwest.dev", "--type=merge", "-p", `{"spec":{"latestResourceSchemas":["v221001-aaaaaaaa.cowboys.wildwest.dev"]}}`)
	eventually(t, 30*time.Second, "the binding to follow the new schema", func(ctx context.Context) (bool, error) {
		b, err := kcpClient(t, s, "consumer").APIBindings().Get(ctx, "cowboys", metav1.GetOptions{})
		return err == nil && len(b.Status.BoundResources) == 1 && b.Status.BoundResources[0].Schema.Name == "v221001-aaaaaaaa.cowboys.wildwest.dev", err
	})
	eventually(t, 30*time.Second, "the new schema to be served", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl("consumer", "get", "cowboy", "one", "-o", "jsonpath={.spec.horse}")
		return err == nil && out == "silver", nil
	})
	if out := s.MustKubectl(t, "consumer", "explain", "cowboys.spec"); !strings.Contains(out, "horse") {
		t.Errorf("kubectl explain after the schema change:\n%s", out)
	}
}

// TestAPIBindingClusterDeletion: deleting a consumer's logical cluster
// deletes its bound objects too, stored under the export's identity.
func TestAPIBindingClusterDeletion(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"provider", "consumer"} {
		createCluster(t, s, c)
	}
	hash := publishCowboys(t, s, "provider")
	createBinding(t, s, "consumer", "cowboys", "provider", "wildwest.dev")
	waitBound(t, s, "consumer", "cowboys")
	s.MustKubectl(t, "consumer", "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))
	s.MustKubectl(t, "consumer", "patch", "cowboy", "one", "--type=merge", "-p", `{"metadata":{"finalizers":["example.com/hold"]}}`)

	lcs := dynamicClient(t, s, "consumer").Resource(logicalClusterGVR)
	if err := lcs.Delete(t.Context(), "cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Cowboy's finalizer holds the deletion; its controller removes it.
	eventually(t, 30*time.Second, "the Cowboy to be deleting", func(ctx context.Context) (bool, error) {
		o, err := dynamicClient(t, s, "consumer").Resource(cowboysGVR).Namespace("default").Get(ctx, "one", metav1.GetOptions{})
		return err == nil && o.GetDeletionTimestamp() != nil, nil
	})
	if _, err := dynamicClient(t, s, "consumer").Resource(cowboysGVR).Namespace("default").Patch(t.Context(), "one", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the consumer's LogicalCluster to be gone", func(ctx context.Context) (bool, error) {
		_, err := lcs.Get(ctx, "cluster", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	resp, err := shardEtcd(t, s).Get(t.Context(), "/registry/wildwest.dev/cowboys/"+hash+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil || len(resp.Kvs) != 0 {
		t.Errorf("bound objects outlived their logical cluster: %v %v", err, resp.Kvs)
	}
}

// TestAPIBindingOwnerReferences: an object owned by a bound object is not
// taken for an orphan by the garbage collector (it resolves the owner's
// kind through the cluster's discovery, which lists bound resources), and
// is collected once its owner is deleted.
func TestAPIBindingOwnerReferences(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"provider", "consumer"} {
		createCluster(t, s, c)
	}
	publishCowboys(t, s, "provider")
	createBinding(t, s, "consumer", "cowboys", "provider", "wildwest.dev")
	waitBound(t, s, "consumer", "cowboys")
	s.MustKubectl(t, "consumer", "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))
	uid := s.MustKubectl(t, "consumer", "get", "cowboy", "one", "-o", "jsonpath={.metadata.uid}")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: "default", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "wildwest.dev/v1alpha1", Kind: "Cowboy", Name: "one", UID: types.UID(uid),
	}}}}
	if _, err := kube(t, s, "consumer").CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if _, err := kube(t, s, "consumer").CoreV1().ConfigMaps("default").Get(t.Context(), "owned", metav1.GetOptions{}); err != nil {
		t.Errorf("the garbage collector deleted a configmap owned by an existing Cowboy: %v", err)
	}
	// Once the owner goes, so does its dependent: the collector monitors
	// the bound resource.
	s.MustKubectl(t, "consumer", "delete", "cowboy", "one")
	eventually(t, 30*time.Second, "the configmap of the deleted Cowboy to be collected", func(ctx context.Context) (bool, error) {
		_, err := kube(t, s, "consumer").CoreV1().ConfigMaps("default").Get(ctx, "owned", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestAPIBindingClaimOnBoundResource: an export claims the resource of
// another export by its identity; through its virtual workspace the
// claiming provider discovers it and lists it in the consumer that accepts
// the claim.
func TestAPIBindingClaimOnBoundResource(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"provider", "observer", "consumer"} {
		createCluster(t, s, c)
	}
	hash := publishCowboys(t, s, "provider")
	s.MustKubectl(t, "observer", "apply", "-f", yamlFile(t, "observer.yaml", `apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata:
  name: observer.dev
spec:
  permissionClaims:
  - group: wildwest.dev
    resource: cowboys
    identityHash: `+hash+`
    all: true
`))
	eventually(t, 30*time.Second, "the observer export's identity", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, "observer").APIExports().Get(ctx, "observer.dev", metav1.GetOptions{})
		return err == nil && e.Status.IdentityHash != "", err
	})
	createBinding(t, s, "consumer", "cowboys", "provider", "wildwest.dev")
	s.MustKubectl(t, "consumer", "apply", "-f", yamlFile(t, "observe.yaml", `apiVersion: apis.kcp.io/v1alpha1
kind: APIBinding
metadata:
  name: observer
spec:
  reference:
    export:
      path: observer
      name: observer.dev
  permissionClaims:
  - group: wildwest.dev
    resource: cowboys
    identityHash: `+hash+`
    all: true
    state: Accepted
`))
	waitBound(t, s, "consumer", "cowboys")
	waitBound(t, s, "consumer", "observer")
	s.MustKubectl(t, "consumer", "apply", "-f", yamlFile(t, "one.yaml", cowboyOne))

	vw := s.URL + "/services/apiexport/observer/observer.dev/clusters/*"
	out := s.MustKubectl(t, "observer", "--server", vw, "api-resources")
	if !regexp.MustCompile(`(?m)^cowboys\s+wildwest.dev/v1alpha1\s+true\s+Cowboy$`).MatchString(out) {
		t.Errorf("the claimed resource of another export is not in discovery:\n%s", out)
	}
	out = s.MustKubectl(t, "observer", "--server", vw, "get", "cowboys", "-A", "--no-headers", "-o", `custom-columns=C:.metadata.annotations.kcp\.io/cluster,N:.metadata.name`)
	if strings.TrimSpace(out) != "consumer   one" && !regexp.MustCompile(`^consumer\s+one$`).MatchString(strings.TrimSpace(out)) {
		t.Errorf("claimed cowboys through the observer's virtual workspace:\n%s", out)
	}
}
