package integration

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/controllers/logicalclusterdeletion"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// shardEtcd returns a client of the shard's embedded etcd.
func shardEtcd(t *testing.T, s *framework.Shard) *clientv3.Client {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"http://127.0.0.1:" + strconv.Itoa(s.Options.EmbeddedEtcdClientPort)},
		DialTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// clusterKeys returns the etcd keys of a logical cluster: those with the
// cluster as a path segment.
func clusterKeys(ctx context.Context, client *clientv3.Client, cluster logicalcluster.Name) ([]string, error) {
	resp, err := client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "/"+string(cluster)+"/") {
			keys = append(keys, string(kv.Key))
		}
	}
	return keys, nil
}

// TestLogicalClusterDeletion deletes a logical cluster with content of
// every kind, some of it with finalizers, and checks that the deletion
// waits for the finalizers (reporting them, keeping the rest of the content
// for the controllers that remove them), that nothing of the cluster is
// left in etcd afterwards, not even the custom resources of a CRD that
// cannot be decoded, and that a logical cluster with the same content is
// untouched.
func TestLogicalClusterDeletion(t *testing.T) {
	s := framework.StartShard(t)
	x, y := logicalcluster.Name("lc-deletion-x"), logicalcluster.Name("lc-deletion-y")
	for _, c := range []logicalcluster.Name{x, y} {
		createCluster(t, s, c)
	}
	ctx := t.Context()

	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	for _, c := range []logicalcluster.Name{x, y} {
		client := kube(t, s, c)
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Finalizers hold the deletion until a controller, here the test,
		// removes them.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "team", Finalizers: []string{"example.com/hold"}}}
		if _, err := client.CoreV1().ConfigMaps("team").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().Secrets("team").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "team"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createCRD(t, s, c, testCRD("gadgets", "", apiextensionsv1.NamespaceScoped))
		waitForCRD(t, s, c, "gadgets.example.com", "Established", established)
		dyn := dynamicFor(t, s, c)
		eventually(t, crdControllerTimeout, "gadgets to be served in "+string(c), func(ctx context.Context) (bool, error) {
			_, err := countObjects(ctx, dyn, gadgets)
			return err == nil, err
		})
		createObject(t, dyn, gadgets, "Gadget", "team", "g", "example.com/gadget-cleanup")
	}

	etcd := shardEtcd(t, s)
	keysOf := func(c logicalcluster.Name) []string {
		t.Helper()
		keys, err := clusterKeys(ctx, etcd, c)
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	before := keysOf(y)
	for _, want := range []string{"/configmaps/", "/secrets/", "/namespaces/", "/customresourcedefinitions/", "/gadgets/customresources/", "/logicalclusters/"} {
		if !slices.ContainsFunc(keysOf(x), func(k string) bool { return strings.Contains(k, want) }) {
			t.Fatalf("no key with %s for cluster %s in etcd: %v", want, x, keysOf(x))
		}
	}

	// A CRD that cannot be decoded, with a custom resource: both go with
	// the cluster, found by the CRD's key.
	brokenCRD := "/registry/apiextensions.k8s.io/customresourcedefinitions/" + string(x) + "/widgets.broken.example.org"
	brokenCR := "/registry/broken.example.org/widgets/customresources/" + string(x) + "/team/w"
	if _, err := etcd.Put(ctx, brokenCRD, "not a CRD"); err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Put(ctx, brokenCR, `{"apiVersion":"broken.example.org/v1","kind":"Widget","metadata":{"name":"w","namespace":"team"}}`); err != nil {
		t.Fatal(err)
	}

	// Another finalizer keeps the LogicalCluster after its content is gone,
	// so that the state in between can be seen.
	const hold = "example.com/hold"
	lcs := dynamicFor(t, s, x).Resource(logicalClusterGVR)
	lc, err := lcs.Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(lc.GetFinalizers(), logicalclusterdeletion.Finalizer) {
		t.Fatalf("LogicalCluster of %s has finalizers %v, want %s", x, lc.GetFinalizers(), logicalclusterdeletion.Finalizer)
	}
	lc.SetFinalizers(append(lc.GetFinalizers(), hold))
	if _, err := lcs.Update(ctx, lc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := lcs.Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The objects with finalizers are deleted through the API and hold the
	// deletion; the LogicalCluster says so, and the rest of the content,
	// e.g. the CRD their controller needs, is still there.
	xClient, xDyn := kube(t, s, x), dynamicFor(t, s, x)
	eventually(t, crdControllerTimeout, "the deletion of "+string(x)+" to wait for finalizers", func(ctx context.Context) (bool, error) {
		lc, err := lcs.Get(ctx, "cluster", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(lc.Object, "status", "conditions")
		var reported bool
		for _, c := range conditions {
			cond, _ := c.(map[string]any)
			msg, _ := cond["message"].(string)
			reported = reported || cond["type"] == "WorkspaceContentDeleted" && cond["status"] == "False" && cond["reason"] == "SomeFinalizersRemain" &&
				strings.Contains(msg, "example.com/hold in 1 resource instances") && strings.Contains(msg, "example.com/gadget-cleanup in 1 resource instances")
		}
		if !reported {
			return false, nil
		}
		cm, err := xClient.CoreV1().ConfigMaps("team").Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		g, err := xDyn.Resource(gadgets).Namespace("team").Get(ctx, "g", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return cm.DeletionTimestamp != nil && g.GetDeletionTimestamp() != nil, nil
	})
	if _, err := xClient.CoreV1().Secrets("team").Get(ctx, "s", metav1.GetOptions{}); err != nil {
		t.Errorf("secret of %s while finalizers hold its deletion: %v", x, err)
	}
	if _, err := xClient.CoreV1().ConfigMaps("team").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("creating a configmap in deleting cluster %s: err = %v, want Forbidden", x, err)
	}

	// The controllers remove their finalizers, with an update and a patch,
	// as they would in a terminating namespace.
	cm, err := xClient.CoreV1().ConfigMaps("team").Get(ctx, "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = nil
	if _, err := xClient.CoreV1().ConfigMaps("team").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("removing the finalizer of a configmap in deleting cluster %s: %v", x, err)
	}
	if _, err := xDyn.Resource(gadgets).Namespace("team").Patch(ctx, "g", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("removing the finalizer of a gadget in deleting cluster %s: %v", x, err)
	}

	eventually(t, crdControllerTimeout, "the content of "+string(x)+" to be deleted", func(ctx context.Context) (bool, error) {
		lc, err := lcs.Get(ctx, "cluster", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if lc.GetDeletionTimestamp() == nil {
			t.Fatalf("LogicalCluster of %s is not being deleted", x)
		}
		if !slices.Equal(lc.GetFinalizers(), []string{hold}) {
			return false, nil
		}
		conditions, _, _ := unstructured.NestedSlice(lc.Object, "status", "conditions")
		var deleted, success bool
		for _, c := range conditions {
			cond, _ := c.(map[string]any)
			deleted = deleted || cond["type"] == "WorkspaceContentDeleted" && cond["status"] == "True"
			success = success || cond["type"] == "WorkspaceDeletionContentSuccess" && cond["status"] == "True"
		}
		if !deleted || !success {
			return false, fmt.Errorf("finalizer removed, but conditions are %v", conditions)
		}
		keys, err := clusterKeys(ctx, etcd, x)
		if err != nil {
			return false, err
		}
		if want := []string{"/registry/core.kcp.io/logicalclusters/" + string(x) + "/cluster"}; !slices.Equal(keys, want) {
			t.Fatalf("keys of %s after its content was deleted: %v, want %v", x, keys, want)
		}
		return true, nil
	})

	// Once the other finalizer is gone, so is the LogicalCluster, the last
	// object of the logical cluster.
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := lcs.Patch(ctx, "cluster", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, crdControllerTimeout, "nothing of cluster "+string(x)+" to be left in etcd", func(ctx context.Context) (bool, error) {
		keys, err := clusterKeys(ctx, etcd, x)
		return err == nil && len(keys) == 0, err
	})
	if _, err := lcs.Get(ctx, "cluster", metav1.GetOptions{}); err == nil || !(apierrors.IsNotFound(err) || apierrors.IsForbidden(err)) {
		t.Errorf("LogicalCluster of %s after deletion: err = %v, want NotFound or Forbidden", x, err)
	}

	// Cluster y is untouched.
	after := keysOf(y)
	for _, k := range before {
		if !slices.Contains(after, k) {
			t.Errorf("key %s of cluster %s was deleted", k, y)
		}
	}
	if _, err := kube(t, s, y).CoreV1().ConfigMaps("team").Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Errorf("configmap in %s: %v", y, err)
	}
	if n, err := countObjects(ctx, dynamicFor(t, s, y), gadgets); err != nil || n != 1 {
		t.Errorf("gadgets in %s: %d, %v; want 1", y, n, err)
	}
}
