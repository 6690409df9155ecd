package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// apiResources returns the NAME column of kubectl api-resources.
func apiResources(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) map[string]bool {
	t.Helper()
	out := s.MustKubectl(t, cluster, "api-resources", "--no-headers", "-o", "name")
	names := map[string]bool{}
	for _, line := range strings.Fields(out) {
		names[line] = true
	}
	return names
}

// TestCoreGroupBoundResources: a workspace bound to root:compute's export
// kubernetes serves Services, Pods and Endpoints as bound resources of the
// core group, next to the built-in core resources, as kcp does: discovery
// (kubectl api-resources, /api/v1), OpenAPI (kubectl explain), kubectl
// create and get in protobuf, status updates, deletion, and the identity
// qualified wildcard list the syncer uses. A workspace without the binding
// is unchanged.
func TestCoreGroupBoundResources(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} })
	_, identity := waitComputeBattery(t, s)
	app := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "app", nil).Spec.Cluster)
	plain := logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "plain", nil).Spec.Cluster)
	createBinding(t, s, app, "kubernetes", "root:compute", "kubernetes")
	waitBound(t, s, app, "kubernetes")

	var names map[string]bool
	eventually(t, 30*time.Second, "kubectl api-resources with the bound core resources", func(ctx context.Context) (bool, error) {
		names = apiResources(t, s, app)
		return names["services"], nil
	})
	for _, want := range []string{"configmaps", "secrets", "namespaces", "serviceaccounts", "services", "pods", "endpoints", "deployments.apps", "ingresses.networking.k8s.io"} {
		if !names[want] {
			t.Errorf("kubectl api-resources in the bound workspace lacks %s: %v", want, names)
		}
	}
	// kubectl get --raw takes the path from the server's root, not below
	// the --server path.
	raw := s.MustKubectl(t, app, "get", "--raw", "/clusters/"+app.String()+"/api/v1")
	var list metav1.APIResourceList
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("/api/v1: %v: %s", err, raw)
	}
	listed := map[string]bool{}
	for _, r := range list.APIResources {
		listed[r.Name] = true
	}
	for _, want := range []string{"services", "services/status", "pods", "endpoints", "configmaps", "namespaces"} {
		if !listed[want] {
			t.Errorf("/api/v1 lacks %s: %v", want, listed)
		}
	}
	if apis := s.MustKubectl(t, app, "get", "--raw", "/clusters/"+app.String()+"/apis"); strings.Contains(apis, `"name":""`) {
		t.Errorf("/apis lists the core group: %s", apis)
	}

	// kubectl sends and asks for protobuf.
	eventually(t, 30*time.Second, "kubectl create service", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(app, "create", "service", "clusterip", "web", "--tcp=80:8080")
		if err != nil {
			return false, fmt.Errorf("%w: %s", err, out)
		}
		return true, nil
	})
	if out := s.MustKubectl(t, app, "get", "services"); !strings.Contains(out, "web") {
		t.Errorf("kubectl get services:\n%s", out)
	}
	s.MustKubectl(t, app, "run", "p", "--image=nginx")
	if out := s.MustKubectl(t, app, "get", "pods"); !strings.Contains(out, "p ") {
		t.Errorf("kubectl get pods:\n%s", out)
	}
	if out := s.MustKubectl(t, app, "get", "service", "web", "-o", "jsonpath={.spec.ports[0].targetPort}"); out != "8080" {
		t.Errorf("the Service's target port: %q", out)
	}
	if out := s.MustKubectl(t, app, "explain", "services.spec.ports"); !strings.Contains(out, "targetPort") {
		t.Errorf("kubectl explain services.spec.ports:\n%s", out)
	}

	// The status subresource, update and patch.
	services := dynamicClient(t, s, app).Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace("default")
	svc, err := services.Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(svc.Object, []any{map[string]any{"ip": "10.0.0.1"}}, "status", "loadBalancer", "ingress"); err != nil {
		t.Fatal(err)
	}
	if _, err := services.UpdateStatus(t.Context(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the Service's status: %v", err)
	}
	if _, err := services.Patch(t.Context(), "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching the Service: %v", err)
	}
	if out := s.MustKubectl(t, app, "get", "service", "web", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip} {.metadata.labels.tier}"); out != "10.0.0.1 front" {
		t.Errorf("the Service after the status update and patch: %q", out)
	}
	if _, err := services.Patch(t.Context(), "web", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","annotations":{"applied":"yes"}}}`),
		metav1.PatchOptions{FieldManager: "test"}); err != nil {
		t.Errorf("server-side apply of the Service: %v", err)
	}

	// The syncer lists across clusters with the export's identity.
	wildcardConfig := s.Config("*")
	wildcard, err := dynamic.NewForConfig(wildcardConfig)
	if err != nil {
		t.Fatal(err)
	}
	all, err := wildcard.Resource(schema.GroupVersionResource{Version: "v1", Resource: "services:" + identity}).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("the wildcard list of services:%s: %v", identity, err)
	}
	if len(all.Items) != 1 || all.Items[0].GetName() != "web" || all.Items[0].GetAnnotations()["kcp.io/cluster"] != app.String() {
		t.Errorf("the wildcard list: %v", all.Items)
	}

	s.MustKubectl(t, app, "delete", "service", "web")
	if _, err := services.Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted Service: %v", err)
	}
	s.MustKubectl(t, app, "delete", "pod", "p", "--wait=false")

	// A workspace without the binding serves no Services, and its core
	// group is the built-in one.
	if _, err := dynamicClient(t, s, plain).Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace("default").
		List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("services in a workspace without the binding: %v, want 404", err)
	}
	names = apiResources(t, s, plain)
	if !names["configmaps"] || names["services"] || names["pods"] {
		t.Errorf("kubectl api-resources in a workspace without the binding: %v", names)
	}
}
