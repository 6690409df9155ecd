package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// crdControllerTimeout bounds how long the CRD controllers may take for
// one step.
const crdControllerTimeout = time.Minute

// testCRD returns a CRD of group example.com serving and storing v1 with
// an open schema. kind defaults to the capitalised singular of plural.
func testCRD(plural, kind string, scope apiextensionsv1.ResourceScope, shortNames ...string) *apiextensionsv1.CustomResourceDefinition {
	singular := strings.TrimSuffix(plural, "s")
	if kind == "" {
		kind = strings.ToUpper(singular[:1]) + singular[1:]
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: singular, Kind: kind, ListKind: kind + "List", ShortNames: shortNames},
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

func crdClient(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) apiextensionsclientset.Interface {
	t.Helper()
	c, err := apiextensionsclientset.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dynamicFor(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func createCRD(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, c *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if _, err := crdClient(t, s, cluster).ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), c, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CRD %s in %s: %v", c.Name, cluster, err)
	}
}

// crdCondition describes a condition of a CRD as status/reason.
func crdCondition(c *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) string {
	cond := apiextensionshelpers.FindCRDCondition(c, t)
	if cond == nil {
		return "none"
	}
	return fmt.Sprintf("%s/%s", cond.Status, cond.Reason)
}

// waitForCRD waits until the CRD name of cluster satisfies cond and returns
// it.
func waitForCRD(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, name, what string, cond func(*apiextensionsv1.CustomResourceDefinition) bool) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	client := crdClient(t, s, cluster).ApiextensionsV1().CustomResourceDefinitions()
	var got *apiextensionsv1.CustomResourceDefinition
	eventually(t, crdControllerTimeout, fmt.Sprintf("CRD %s in %s to be %s", name, cluster, what), func(ctx context.Context) (bool, error) {
		var err error
		got, err = client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return cond(got), nil
	})
	return got
}

func established(c *apiextensionsv1.CustomResourceDefinition) bool {
	return apiextensionshelpers.IsCRDConditionTrue(c, apiextensionsv1.Established)
}

func createObject(t *testing.T, client dynamic.Interface, gvr schema.GroupVersionResource, kind, ns, name string, finalizers ...string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name},
	}}
	obj.SetNamespace(ns)
	obj.SetFinalizers(finalizers)
	if _, err := client.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

func countObjects(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource) (int, error) {
	list, err := client.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(list.Items), nil
}

// TestCRDNamingAndEstablishing checks that CRDs are named and established
// per logical cluster.
func TestCRDNamingAndEstablishing(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("crd-naming-a"), logicalcluster.Name("crd-naming-b")
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
	}

	// The same CRD in two clusters: both are Established, neither takes
	// the other's names.
	for _, c := range []logicalcluster.Name{a, b} {
		createCRD(t, s, c, testCRD("gadgets", "", apiextensionsv1.NamespaceScoped, "gd"))
	}
	for _, c := range []logicalcluster.Name{a, b} {
		got := waitForCRD(t, s, c, "gadgets.example.com", "Established", established)
		if cond := crdCondition(got, apiextensionsv1.NamesAccepted); cond != "True/NoConflicts" {
			t.Errorf("NamesAccepted of gadgets in %s = %s", c, cond)
		}
		if want := got.Spec.Names; !apiextensionshelpers.IsCRDConditionTrue(got, apiextensionsv1.NamesAccepted) ||
			got.Status.AcceptedNames.Plural != want.Plural || got.Status.AcceptedNames.Kind != want.Kind ||
			len(got.Status.AcceptedNames.ShortNames) != 1 {
			t.Errorf("accepted names of gadgets in %s = %+v, want %+v", c, got.Status.AcceptedNames, want)
		}
		// Served, and known to kubectl by its short name.
		out, err := s.Kubectl(c, "get", "gd", "-A")
		if err != nil || !strings.Contains(out, "No resources found") {
			t.Errorf("kubectl get gd in %s: %v\n%s", c, err, out)
		}
	}

	// A second CRD of the group in cluster a that wants the kind and a short
	// name of gadgets is refused there, but the same CRD is accepted in a
	// cluster where nothing else uses them.
	createCRD(t, s, a, testCRD("gizmos", "Gadget", apiextensionsv1.NamespaceScoped, "gd"))
	conflicting := waitForCRD(t, s, a, "gizmos.example.com", "refused", func(c *apiextensionsv1.CustomResourceDefinition) bool {
		return apiextensionshelpers.IsCRDConditionFalse(c, apiextensionsv1.NamesAccepted)
	})
	cond := apiextensionshelpers.FindCRDCondition(conflicting, apiextensionsv1.NamesAccepted)
	if !strings.Contains(cond.Message, "is already in use") || !strings.HasSuffix(cond.Reason, "Conflict") {
		t.Errorf("NamesAccepted of the conflicting CRD = %+v, want a conflict", cond)
	}
	if got := crdCondition(conflicting, apiextensionsv1.Established); got != "False/NotAccepted" {
		t.Errorf("Established of the conflicting CRD = %s, want False/NotAccepted", got)
	}
	if conflicting.Status.AcceptedNames.Kind != "" || conflicting.Status.AcceptedNames.Plural != "gizmos" {
		t.Errorf("accepted names of the conflicting CRD = %+v, want the free ones only", conflicting.Status.AcceptedNames)
	}
	const c logicalcluster.Name = "crd-naming-c"
	createCluster(t, s, c)
	createCRD(t, s, c, testCRD("gizmos", "Gadget", apiextensionsv1.NamespaceScoped, "gd"))
	waitForCRD(t, s, c, "gizmos.example.com", "Established", established)

	// Deleting gadgets in cluster a frees its names for gizmos there.
	if err := crdClient(t, s, a).ApiextensionsV1().CustomResourceDefinitions().Delete(t.Context(), "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForCRD(t, s, a, "gizmos.example.com", "Established once gadgets is gone", established)
	got := waitForCRD(t, s, b, "gadgets.example.com", "still Established", established)
	if got.DeletionTimestamp != nil {
		t.Errorf("gadgets in cluster b is being deleted")
	}

	// CRDs of protected groups get the API approval condition.
	protected := testCRD("things", "", apiextensionsv1.ClusterScoped)
	protected.Name, protected.Spec.Group = "things.tessera.k8s.io", "tessera.k8s.io"
	protected.Annotations = map[string]string{apiextensionsv1.KubeAPIApprovedAnnotation: "unapproved, testing only"}
	createCRD(t, s, a, protected)
	waitForCRD(t, s, a, protected.Name, "marked as unapproved", func(c *apiextensionsv1.CustomResourceDefinition) bool {
		return crdCondition(c, apiextensionsv1.KubernetesAPIApprovalPolicyConformant) == "False/UnapprovedAnnotation" && established(c)
	})
}

// TestCRDDeletion checks that deleting a CRD deletes its custom resources in
// its logical cluster, and only there, and then the CRD itself.
func TestCRDDeletion(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("crd-deletion-a"), logicalcluster.Name("crd-deletion-b")
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
	}
	ctx := t.Context()

	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	knobs := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "knobs"}
	for _, c := range []logicalcluster.Name{a, b} {
		createCRD(t, s, c, testCRD("gadgets", "", apiextensionsv1.NamespaceScoped))
		createCRD(t, s, c, testCRD("knobs", "", apiextensionsv1.ClusterScoped))
		waitForCRD(t, s, c, "gadgets.example.com", "Established", established)
		waitForCRD(t, s, c, "knobs.example.com", "Established", established)
		if _, err := kube(t, s, c).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		dyn := dynamicFor(t, s, c)
		eventually(t, crdControllerTimeout, "gadgets and knobs to be served in "+string(c), func(ctx context.Context) (bool, error) {
			if _, err := countObjects(ctx, dyn, gadgets); err != nil {
				return false, err
			}
			_, err := countObjects(ctx, dyn, knobs)
			return err == nil, err
		})
		for _, ns := range []string{"default", "team"} {
			for _, name := range []string{"one", "two"} {
				createObject(t, dyn, gadgets, "Gadget", ns, name)
			}
		}
		createObject(t, dyn, knobs, "Knob", "", "k1")
	}
	// In cluster a, one gadget holds the CRD until its finalizer goes.
	createObject(t, dynamicFor(t, s, a), gadgets, "Gadget", "team", "held", "example.com/hold")

	if out, err := s.Kubectl(a, "delete", "crd", "knobs.example.com", "--timeout=60s"); err != nil {
		t.Fatalf("kubectl delete crd knobs: %v\n%s", err, out)
	}
	if _, err := crdClient(t, s, a).ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "knobs.example.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("knobs CRD after kubectl delete: err = %v, want NotFound", err)
	}

	if err := crdClient(t, s, a).ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForCRD(t, s, a, "gadgets.example.com", "waiting for the held gadget", func(c *apiextensionsv1.CustomResourceDefinition) bool {
		return crdCondition(c, apiextensionsv1.Terminating) == "True/InstanceDeletionInProgress"
	})
	dynA := dynamicFor(t, s, a)
	eventually(t, crdControllerTimeout, "all gadgets but the held one to be deleted in cluster a", func(ctx context.Context) (bool, error) {
		list, err := dynA.Resource(gadgets).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(list.Items) == 1 && list.Items[0].GetName() == "held" && list.Items[0].GetDeletionTimestamp() != nil, nil
	})
	if _, err := dynA.Resource(gadgets).Namespace("team").Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, crdControllerTimeout, "the gadgets CRD to be deleted in cluster a", func(ctx context.Context) (bool, error) {
		_, err := crdClient(t, s, a).ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "gadgets.example.com", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})

	// Cluster b keeps its CRDs and custom resources.
	dynB := dynamicFor(t, s, b)
	for gvr, want := range map[schema.GroupVersionResource]int{gadgets: 4, knobs: 1} {
		waitForCRD(t, s, b, gvr.Resource+".example.com", "still Established", func(c *apiextensionsv1.CustomResourceDefinition) bool {
			return established(c) && c.DeletionTimestamp == nil
		})
		if n, err := countObjects(ctx, dynB, gvr); err != nil || n != want {
			t.Errorf("%s in cluster b: %d, %v; want %d", gvr.Resource, n, err, want)
		}
	}

	// The custom resources of cluster a are gone from storage: a new CRD of
	// the same name starts empty.
	createCRD(t, s, a, testCRD("gadgets", "", apiextensionsv1.NamespaceScoped))
	waitForCRD(t, s, a, "gadgets.example.com", "Established again", established)
	eventually(t, crdControllerTimeout, "the new gadgets CRD to be served empty", func(ctx context.Context) (bool, error) {
		n, err := countObjects(ctx, dynA, gadgets)
		if err != nil {
			return false, err
		}
		if n != 0 {
			t.Fatalf("the recreated gadgets CRD in cluster a has %d gadgets", n)
		}
		return true, nil
	})
}
