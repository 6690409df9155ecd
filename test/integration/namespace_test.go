package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

func mustCreateNamespace(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func mustCreateConfigMap(t *testing.T, client kubernetes.Interface, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	created, err := client.CoreV1().ConfigMaps(cm.Namespace).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s/%s: %v", cm.Namespace, cm.Name, err)
	}
	return created
}

func TestNamespaceDeletion(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("ns-deletion-a"), logicalcluster.Name("ns-deletion-b")
	clients := map[logicalcluster.Name]kubernetes.Interface{}
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
		clients[c] = kube(t, s, c)
	}
	ctx := t.Context()

	// The same namespace and content in both clusters; in cluster a a
	// configmap with a finalizer holds the namespace until it is removed.
	const ns = "team"
	for _, c := range []logicalcluster.Name{a, b} {
		client := clients[c]
		mustCreateNamespace(t, client, ns)
		mustCreateConfigMap(t, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}, Data: map[string]string{"k": "v"}})
		if _, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secret", Namespace: ns}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating secret in %s: %v", c, err)
		}
		mustCreateConfigMap(t, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: ns, Finalizers: []string{"example.com/hold"}}})
		// A custom resource of the cluster's own CRD.
		mustCreateWidgetCRD(t, s, c)
		mustCreateWidget(t, lifecycleDynamicClient(t, s, c), ns, "widget")
	}

	if err := clients[a].CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, controllerTimeout, "the content of the namespace to be deleted in cluster a", func(ctx context.Context) (bool, error) {
		if _, err := clients[a].CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, err
		}
		if _, err := clients[a].CoreV1().Secrets(ns).Get(ctx, "secret", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, err
		}
		if _, err := lifecycleDynamicClient(t, s, a).Resource(widgetsGVR).Namespace(ns).Get(ctx, "widget", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, err
		}
		held, err := clients[a].CoreV1().ConfigMaps(ns).Get(ctx, "held", metav1.GetOptions{})
		return err == nil && held.DeletionTimestamp != nil, err
	})
	eventually(t, controllerTimeout, "the namespace to report the finalizer that holds it", func(ctx context.Context) (bool, error) {
		got, err := clients[a].CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.Phase != corev1.NamespaceTerminating || !slices.Contains(got.Spec.Finalizers, corev1.FinalizerKubernetes) {
			t.Fatalf("namespace finalized while content remains: %+v", got)
		}
		return conditionTrue(got, corev1.NamespaceContentRemaining) && conditionTrue(got, corev1.NamespaceFinalizersRemaining), nil
	})

	// Releasing the last object lets the namespace go.
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := clients[a].CoreV1().ConfigMaps(ns).Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, controllerTimeout, "the namespace to be deleted in cluster a", func(ctx context.Context) (bool, error) {
		_, err := clients[a].CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})

	// Cluster b is untouched.
	got, err := clients[b].CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp != nil || got.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("namespace in cluster b = %+v, %v; want it active", got, err)
	}
	for _, name := range []string{"cm", "held"} {
		if _, err := clients[b].CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("configmap %s in cluster b: %v", name, err)
		}
	}
	if _, err := clients[b].CoreV1().Secrets(ns).Get(ctx, "secret", metav1.GetOptions{}); err != nil {
		t.Errorf("secret in cluster b: %v", err)
	}
	if _, err := lifecycleDynamicClient(t, s, b).Resource(widgetsGVR).Namespace(ns).Get(ctx, "widget", metav1.GetOptions{}); err != nil {
		t.Errorf("widget in cluster b: %v", err)
	}

	// The namespace name can be used again in cluster a.
	mustCreateNamespace(t, clients[a], ns)
}

func TestDefaultServiceAccount(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("sa-a"), logicalcluster.Name("sa-b")
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
	}
	ctx := t.Context()
	client := kube(t, s, a)

	mustCreateNamespace(t, client, "team")
	var first types.UID
	eventually(t, controllerTimeout, "the default service account in the new namespace", func(ctx context.Context) (bool, error) {
		sa, err := client.CoreV1().ServiceAccounts("team").Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		first = sa.UID
		return true, nil
	})
	if err := client.CoreV1().ServiceAccounts("team").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, controllerTimeout, "the default service account to be recreated", func(ctx context.Context) (bool, error) {
		sa, err := client.CoreV1().ServiceAccounts("team").Get(ctx, "default", metav1.GetOptions{})
		return err == nil && sa.UID != first, err
	})

	// Only the cluster with the namespace gets a service account.
	sas, err := kube(t, s, b).CoreV1().ServiceAccounts("team").List(ctx, metav1.ListOptions{})
	if err != nil || len(sas.Items) != 0 {
		t.Errorf("service accounts of team in cluster b = %v, %v; want none", sas, err)
	}
}

// controllerTimeout is how long the tests wait for a controller to act.
const controllerTimeout = 30 * time.Second

func conditionTrue(ns *corev1.Namespace, t corev1.NamespaceConditionType) bool {
	for _, c := range ns.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
