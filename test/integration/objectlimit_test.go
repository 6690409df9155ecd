package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// setObjectLimit sets core.kcp.io/max-total-objects on a LogicalCluster,
// as the shard admin.
func setObjectLimit(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, limit string) {
	t.Helper()
	client, err := dynamic.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"core.kcp.io/max-total-objects":%q}}}`, limit)
	if _, err := client.Resource(logicalClusterGVR).Patch(t.Context(), "cluster", "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotating the LogicalCluster of %s: %v", cluster, err)
	}
}

// fillUntilRefused creates ConfigMaps until one is refused and returns the
// refusal and how many were created.
func fillUntilRefused(t *testing.T, client kubernetes.Interface, max int) (int, error) {
	t.Helper()
	for i := 0; i < max; i++ {
		_, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: probeName("fill")}}, metav1.CreateOptions{})
		if err != nil {
			return i, err
		}
	}
	return max, nil
}

// TestObjectLimitPerCluster: a logical cluster cannot hold more objects
// than its limit; only creates are refused, other clusters are not
// affected, and deleting makes room.
func TestObjectLimitPerCluster(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) {
		o.LogicalClusterObjectLimit = 40
		o.LogicalClusterObjectScanInterval = 500 * time.Millisecond
	})
	annotated, defaulted, unlimited := logicalcluster.Name("limit-a"), logicalcluster.Name("limit-b"), logicalcluster.Name("limit-c")
	for _, c := range []logicalcluster.Name{annotated, defaulted, unlimited} {
		createCluster(t, s, c)
	}
	setObjectLimit(t, s, annotated, "20")
	setObjectLimit(t, s, unlimited, "0")
	ctx := t.Context()

	t.Run("the annotation's limit", func(t *testing.T) {
		ka := kube(t, s, annotated)
		var created int
		var err error
		// The annotation reaches the shard's informer soon after the patch.
		eventually(t, 30*time.Second, "a create beyond the annotation's limit to be refused", func(context.Context) (bool, error) {
			var n int
			n, err = fillUntilRefused(t, ka, 25)
			created += n
			return err != nil, nil
		})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "limit of 20 objects") || !strings.Contains(err.Error(), "core.kcp.io/max-total-objects") {
			t.Fatalf("refusal %v, want 403 naming the limit of 20 and the annotation", err)
		}
		if created == 0 || created >= 20 {
			t.Errorf("created %d ConfigMaps before the refusal, want some and fewer than 20 (the cluster holds other objects too)", created)
		}
		list, err := ka.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			t.Fatalf("listing the ConfigMaps: %v", err)
		}
		cm := &list.Items[0]
		cm.Data = map[string]string{"updated": "yes"}
		if _, err := ka.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Errorf("an update at the limit was refused: %v", err)
		}
		if err := ka.CoreV1().ConfigMaps("default").Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("a delete at the limit was refused: %v", err)
		}
		// The count is eventually consistent (a scan that read the deleted
		// object may land after the delete): room appears within a scan.
		eventually(t, 10*time.Second, "a create after a delete made room to be admitted", func(context.Context) (bool, error) {
			_, err := ka.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-delete"}}, metav1.CreateOptions{})
			return err == nil, err
		})
		// The scans keep the count: still full after several of them
		// (what was admitted before a scan counts until its result is in).
		time.Sleep(1500 * time.Millisecond)
		if _, over := ka.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "over"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(over) {
			t.Errorf("a create beyond the limit after rescans: %v, want 403", over)
		}
	})

	t.Run("the shard's default", func(t *testing.T) {
		created, err := fillUntilRefused(t, kube(t, s, defaulted), 60)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "limit of 40 objects") || !strings.Contains(err.Error(), "--logical-cluster-total-object-limit") {
			t.Fatalf("refusal after %d creates: %v, want 403 naming the default of 40", created, err)
		}
	})

	t.Run("an annotation of 0 lifts the limit", func(t *testing.T) {
		if created, err := fillUntilRefused(t, kube(t, s, unlimited), 60); err != nil {
			t.Fatalf("create %d in a cluster without limit: %v", created, err)
		}
	})

	t.Run("root is not limited by the default", func(t *testing.T) {
		if created, err := fillUntilRefused(t, kube(t, s, "root"), 60); err != nil {
			t.Fatalf("create %d in root: %v", created, err)
		}
	})
}
