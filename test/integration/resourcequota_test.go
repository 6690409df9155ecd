package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

func quotaOf(hard ...string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for i := 0; i+1 < len(hard); i += 2 {
		q.Spec.Hard[corev1.ResourceName(hard[i])] = resource.MustParse(hard[i+1])
	}
	return q
}

// waitUsed waits until the quota's status.used of name is want.
func waitUsed(t *testing.T, client kubernetes.Interface, namespace, quota string, name corev1.ResourceName, want int64) {
	t.Helper()
	var got corev1.ResourceList
	eventually(t, 30*time.Second, fmt.Sprintf("status.used[%s] of %s/%s to be %d", name, namespace, quota, want), func(ctx context.Context) (bool, error) {
		q, err := client.CoreV1().ResourceQuotas(namespace).Get(ctx, quota, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = q.Status.Used
		v, ok := q.Status.Used[name]
		return ok && v.Value() == want, fmt.Errorf("used %v", got)
	})
}

// TestResourceQuotaPerCluster enforces quotas of one logical cluster in
// that cluster only, keeps status.used current as objects come and go, and
// counts custom resources.
func TestResourceQuotaPerCluster(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("quota-a"), logicalcluster.Name("quota-b")
	createCluster(t, s, a)
	createCluster(t, s, b)
	ka, kb := kube(t, s, a), kube(t, s, b)
	ctx := t.Context()
	for _, k := range []kubernetes.Interface{ka, kb} {
		if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mustCreateWidgetCRD(t, s, a)
	if _, err := ka.CoreV1().ResourceQuotas("team").Create(ctx, quotaOf("configmaps", "2", "count/secrets", "1", "count/widgets.example.com", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the quota: %v", err)
	}
	waitUsed(t, ka, "team", "limits", "configmaps", 0)
	waitUsed(t, ka, "team", "limits", "count/widgets.example.com", 0)

	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	for _, name := range []string{"one", "two"} {
		if _, err := ka.CoreV1().ConfigMaps("team").Create(ctx, cm(name), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating ConfigMap %s within the quota: %v", name, err)
		}
	}
	_, err := ka.CoreV1().ConfigMaps("team").Create(ctx, cm("three"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: limits") || !strings.Contains(err.Error(), "configmaps=2") {
		t.Fatalf("third ConfigMap: %v, want 403 exceeded quota naming limits and configmaps=2", err)
	}
	waitUsed(t, ka, "team", "limits", "configmaps", 2)

	t.Run("another cluster is not limited", func(t *testing.T) {
		for _, name := range []string{"one", "two", "three"} {
			if _, err := kb.CoreV1().ConfigMaps("team").Create(ctx, cm(name), metav1.CreateOptions{}); err != nil {
				t.Fatalf("ConfigMap %s in %s: %v", name, b, err)
			}
		}
		if _, err := kb.CoreV1().ResourceQuotas("team").Create(ctx, quotaOf("configmaps", "10"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, kb, "team", "limits", "configmaps", 3)
		waitUsed(t, ka, "team", "limits", "configmaps", 2)
	})

	t.Run("deleting frees the quota", func(t *testing.T) {
		if err := ka.CoreV1().ConfigMaps("team").Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, ka, "team", "limits", "configmaps", 1)
		if _, err := ka.CoreV1().ConfigMaps("team").Create(ctx, cm("three"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("ConfigMap after a deletion freed the quota: %v", err)
		}
	})

	t.Run("custom resources and count/ names", func(t *testing.T) {
		dyn := lifecycleDynamicClient(t, s, a)
		mustCreateWidget(t, dyn, "team", "first")
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "second"},
		}}
		_, err := dyn.Resource(widgetsGVR).Namespace("team").Create(ctx, w, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "count/widgets.example.com=1") {
			t.Errorf("second widget: %v, want 403 exceeded quota on count/widgets.example.com", err)
		}
		if _, err := ka.CoreV1().Secrets("team").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := ka.CoreV1().Secrets("team").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s2"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("second secret: %v, want 403", err)
		}
		waitUsed(t, ka, "team", "limits", "count/widgets.example.com", 1)
		waitUsed(t, ka, "team", "limits", "count/secrets", 1)
	})

	t.Run("a new quota counts what exists", func(t *testing.T) {
		if _, err := ka.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		dyn := lifecycleDynamicClient(t, s, a)
		for i := range 3 {
			mustCreateWidget(t, dyn, "before", fmt.Sprintf("w%d", i))
			if _, err := ka.CoreV1().ConfigMaps("before").Create(ctx, cm(fmt.Sprintf("c%d", i)), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ka.CoreV1().ResourceQuotas("before").Create(ctx, quotaOf("count/widgets.example.com", "5", "count/configmaps", "5", "count/gadgets.example.com", "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, ka, "before", "limits", "count/widgets.example.com", 3)
		waitUsed(t, ka, "before", "limits", "count/configmaps", 3)
		waitUsed(t, ka, "before", "limits", "count/gadgets.example.com", 0)
	})

	t.Run("kubectl shows usage", func(t *testing.T) {
		out := s.MustKubectl(t, a, "describe", "resourcequota", "limits", "-n", "team")
		for _, want := range []string{"configmaps", "count/widgets.example.com"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl describe lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(out, "configmaps                  2     2") && !strings.Contains(strings.Join(strings.Fields(out), " "), "configmaps 2 2") {
			t.Errorf("kubectl describe does not show configmaps 2 of 2:\n%s", out)
		}
	})
}

// TestResourceQuotaRefusesWhatCannotBeEnforced: a logical cluster runs no
// pods and has no services or volumes, so quotas on compute, storage or
// pod scopes could be stored but never enforced; they are refused.
func TestResourceQuotaRefusesWhatCannotBeEnforced(t *testing.T) {
	s := framework.StartShard(t)
	a := logicalcluster.Name("quota-refused")
	createCluster(t, s, a)
	ka := kube(t, s, a)
	for _, q := range []*corev1.ResourceQuota{
		quotaOf("pods", "10"),
		quotaOf("requests.cpu", "1", "configmaps", "2"),
		func() *corev1.ResourceQuota {
			q := quotaOf("configmaps", "2")
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}
			return q
		}(),
	} {
		_, err := ka.CoreV1().ResourceQuotas("default").Create(t.Context(), q, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "logical clusters") {
			t.Errorf("quota %v: %v, want 422 explaining what logical clusters lack", q.Spec, err)
		}
	}
}

// TestResourceQuotaJustCreated: a quota is enforced on the next request
// once its status says what it limits (as in Kubernetes, the quota
// controller writes status.hard first), whether or not the shard's
// informer has it yet (the accessor counts the quotas of the namespace in
// etcd when the informer has none, and lists them then), and a namespace
// without quotas admits without such a list.
func TestResourceQuotaJustCreated(t *testing.T) {
	s := framework.StartShard(t)
	c := logicalcluster.Name("quota-fresh")
	createCluster(t, s, c)
	k := kube(t, s, c)
	ctx := t.Context()
	for i := range 5 {
		ns := fmt.Sprintf("fresh-%d", i)
		if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := k.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a ConfigMap in %s without a quota: %v", ns, err)
		}
		if _, err := k.CoreV1().ResourceQuotas(ns).Create(ctx, quotaOf("count/secrets", "0"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, k, ns, "limits", "count/secrets", 0)
		_, err := k.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota") {
			t.Fatalf("a Secret right after a quota of 0 secrets in %s: %v, want 403 exceeded quota", ns, err)
		}
	}
}
