package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// mustCreateOwnerPair creates a configmap owner and a configmap that it owns.
func mustCreateOwnerPair(t *testing.T, client kubernetes.Interface, ns, owner, dependent string, block bool) (*corev1.ConfigMap, *corev1.ConfigMap) {
	t.Helper()
	o := mustCreateConfigMap(t, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: owner, Namespace: ns}})
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID}
	if block {
		ref.BlockOwnerDeletion = ptr.To(true)
	}
	d := mustCreateConfigMap(t, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: dependent, Namespace: ns, OwnerReferences: []metav1.OwnerReference{ref}}})
	return o, d
}

func configMapGone(ctx context.Context, client kubernetes.Interface, ns, name string) (bool, error) {
	_, err := client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

func TestGarbageCollection(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("gc-a"), logicalcluster.Name("gc-b")
	clients := map[logicalcluster.Name]kubernetes.Interface{}
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
		clients[c] = kube(t, s, c)
	}
	ctx := t.Context()

	// The same objects in both clusters, each cluster's dependents owned by
	// that cluster's owners.
	const ns = "apps"
	dependents := map[logicalcluster.Name]map[string]*corev1.ConfigMap{}
	for _, c := range []logicalcluster.Name{a, b} {
		mustCreateNamespace(t, clients[c], ns)
		dependents[c] = map[string]*corev1.ConfigMap{}
		for _, pair := range []struct {
			owner, dependent string
			block            bool
		}{
			{"background-owner", "background-dep", false},
			{"orphan-owner", "orphan-dep", false},
			{"foreground-owner", "foreground-dep", true},
		} {
			_, dependents[c][pair.dependent] = mustCreateOwnerPair(t, clients[c], ns, pair.owner, pair.dependent, pair.block)
		}
	}

	t.Run("background", func(t *testing.T) {
		if err := clients[a].CoreV1().ConfigMaps(ns).Delete(ctx, "background-owner", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the dependent of the deleted owner to be collected", func(ctx context.Context) (bool, error) {
			return configMapGone(ctx, clients[a], ns, "background-dep")
		})
	})

	t.Run("orphan", func(t *testing.T) {
		if err := clients[a].CoreV1().ConfigMaps(ns).Delete(ctx, "orphan-owner", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the orphaning owner to be deleted", func(ctx context.Context) (bool, error) {
			return configMapGone(ctx, clients[a], ns, "orphan-owner")
		})
		dep, err := clients[a].CoreV1().ConfigMaps(ns).Get(ctx, "orphan-dep", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("orphaned dependent: %v", err)
		}
		if len(dep.OwnerReferences) != 0 {
			t.Errorf("orphaned dependent still has owner references %v", dep.OwnerReferences)
		}
	})

	t.Run("foreground", func(t *testing.T) {
		if err := clients[a].CoreV1().ConfigMaps(ns).Delete(ctx, "foreground-owner", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the blocking dependent and then its owner to be deleted", func(ctx context.Context) (bool, error) {
			depGone, err := configMapGone(ctx, clients[a], ns, "foreground-dep")
			if err != nil || !depGone {
				return false, err
			}
			return configMapGone(ctx, clients[a], ns, "foreground-owner")
		})
	})

	// Ownership cycles of two and three objects, every reference blocking:
	// deleting one in the foreground deletes them all, as upstream's
	// collector does.
	for _, cycle := range [][]string{{"cycle2-x", "cycle2-y"}, {"cycle3-x", "cycle3-y", "cycle3-z"}} {
		t.Run("foreground "+cycle[0], func(t *testing.T) {
			cms := clients[a].CoreV1().ConfigMaps(ns)
			created := map[string]*corev1.ConfigMap{}
			for _, name := range cycle {
				cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				created[name] = cm
			}
			// Each is owned by the one before it, the first by the last.
			for i, name := range cycle {
				owner := created[cycle[(i+len(cycle)-1)%len(cycle)]]
				cm := created[name]
				cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: ptr.To(true)}}
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := cms.Delete(ctx, cycle[0], metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
				t.Fatal(err)
			}
			eventually(t, controllerTimeout, "every object of the ownership cycle to be deleted", func(ctx context.Context) (bool, error) {
				for _, name := range cycle {
					if gone, err := configMapGone(ctx, clients[a], ns, name); err != nil || !gone {
						return false, err
					}
				}
				return true, nil
			})
		})
	}

	// Nothing happened in cluster b: every owner and dependent is there,
	// unchanged.
	for _, name := range []string{"background-owner", "orphan-owner", "foreground-owner"} {
		got, err := clients[b].CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || got.DeletionTimestamp != nil || len(got.Finalizers) > 0 {
			t.Errorf("owner %s in cluster b = %+v, %v; want it untouched", name, got, err)
		}
	}
	for name, want := range dependents[b] {
		got, err := clients[b].CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("dependent %s in cluster b: %v", name, err)
			continue
		}
		if got.UID != want.UID || len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != want.OwnerReferences[0].UID {
			t.Errorf("dependent %s in cluster b = %+v, want it untouched", name, got.ObjectMeta)
		}
	}
}

// TestGarbageCollectionOfDanglingReferences checks that a dependent whose
// owner never existed in its cluster is collected, and one that still has
// a live owner only loses the dangling reference.
func TestGarbageCollectionOfDanglingReferences(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("dangling-a"), logicalcluster.Name("dangling-b")
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
	}
	ca, cb := kube(t, s, a), kube(t, s, b)
	const ns = "apps"
	mustCreateNamespace(t, ca, ns)
	mustCreateNamespace(t, cb, ns)

	// An owner in cluster b does not own objects of cluster a, even by UID.
	foreign := mustCreateConfigMap(t, cb, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}})
	local := mustCreateConfigMap(t, ca, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local-owner", Namespace: ns}})
	foreignRef := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: foreign.UID}
	localRef := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "local-owner", UID: local.UID}
	mustCreateConfigMap(t, ca, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-foreign", Namespace: ns, OwnerReferences: []metav1.OwnerReference{foreignRef}}})
	mustCreateConfigMap(t, ca, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "both", Namespace: ns, OwnerReferences: []metav1.OwnerReference{foreignRef, localRef}}})

	eventually(t, controllerTimeout, "the dependent without an owner in its cluster to be collected", func(ctx context.Context) (bool, error) {
		return configMapGone(ctx, ca, ns, "only-foreign")
	})
	eventually(t, controllerTimeout, "the dangling reference to be removed", func(ctx context.Context) (bool, error) {
		got, err := ca.CoreV1().ConfigMaps(ns).Get(ctx, "both", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(got.OwnerReferences) == 1 && got.OwnerReferences[0].UID == local.UID, nil
	})
	if _, err := cb.CoreV1().ConfigMaps(ns).Get(t.Context(), "owner", metav1.GetOptions{}); err != nil {
		t.Errorf("owner in cluster b: %v", err)
	}
}

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// mustCreateWidgetCRD creates the namespaced CRD widgets.example.com in a
// logical cluster and marks it established, as the shard's CRD controllers
// would, so that the test does not depend on them.
func mustCreateWidgetCRD(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) {
	t.Helper()
	client, err := apiextensionsclientset.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	created, err := crds.Create(t.Context(), crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CRD in %s: %v", cluster, err)
	}
	created.Status.AcceptedNames = created.Spec.Names
	created.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", LastTransitionTime: metav1.Now()},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", LastTransitionTime: metav1.Now()},
	}
	if _, err := crds.UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		t.Fatalf("establishing CRD in %s: %v", cluster, err)
	}
	dyn := lifecycleDynamicClient(t, s, cluster)
	eventually(t, controllerTimeout, "widgets to be served", func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(widgetsGVR).Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
}

func lifecycleDynamicClient(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCreateWidget(t *testing.T, client dynamic.Interface, ns, name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns},
	}}
	w.SetOwnerReferences(owners)
	created, err := client.Resource(widgetsGVR).Namespace(ns).Create(t.Context(), w, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating widget %s/%s: %v", ns, name, err)
	}
	return created
}

// TestGarbageCollectionOfCustomResources checks owners and dependents that
// are custom resources, whose monitor starts when their CRD appears.
func TestGarbageCollectionOfCustomResources(t *testing.T) {
	s := framework.StartShard(t)
	const cluster = logicalcluster.Name("gc-crd")
	createCluster(t, s, cluster)
	mustCreateWidgetCRD(t, s, cluster)
	client, dyn := kube(t, s, cluster), lifecycleDynamicClient(t, s, cluster)
	const ns = "apps"
	mustCreateNamespace(t, client, ns)

	// A widget owned by a configmap, and a configmap owned by a widget.
	cm := mustCreateConfigMap(t, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-owner", Namespace: ns}})
	mustCreateWidget(t, dyn, ns, "widget-dep", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID})
	w := mustCreateWidget(t, dyn, ns, "widget-owner")
	mustCreateConfigMap(t, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-dep", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "example.com/v1", Kind: "Widget", Name: w.GetName(), UID: w.GetUID()},
	}}})

	if err := client.CoreV1().ConfigMaps(ns).Delete(t.Context(), cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(widgetsGVR).Namespace(ns).Delete(t.Context(), w.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, controllerTimeout, "the widget owned by the configmap to be collected", func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(widgetsGVR).Namespace(ns).Get(ctx, "widget-dep", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	eventually(t, controllerTimeout, "the configmap owned by the widget to be collected", func(ctx context.Context) (bool, error) {
		return configMapGone(ctx, client, ns, "cm-dep")
	})
}
