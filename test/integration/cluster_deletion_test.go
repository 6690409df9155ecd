package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestDeletingALogicalClusterLeavesNoKeys fills a logical cluster with
// built-in objects, a CRD and custom resources, deletes its LogicalCluster,
// and checks that etcd keeps no key of it while a neighbour keeps all of its.
func TestDeletingALogicalClusterLeavesNoKeys(t *testing.T) {
	s := framework.StartShard(t)
	doomed, neighbour := logicalcluster.Name("doomed"), logicalcluster.Name("neighbour")
	for _, c := range []logicalcluster.Name{doomed, neighbour} {
		createCluster(t, s, c)
		s.MustKubectl(t, c, "create", "namespace", "apps")
		s.MustKubectl(t, c, "-n", "apps", "create", "configmap", "cfg", "--from-literal=a=b")
		s.MustKubectl(t, c, "-n", "apps", "create", "secret", "generic", "sec", "--from-literal=a=b")
		s.MustKubectl(t, c, "create", "clusterrole", "reader", "--verb=get", "--resource=configmaps")
		s.MustKubectl(t, c, "apply", "-f", writeFile(t, "crd.yaml", fmt.Sprintf(widgetsCRD, "integer", "integer", "size")))
		s.MustKubectl(t, c, "wait", "--for=condition=Established", "--timeout=60s", "crd/widgets.example.com")
		eventually(t, 30*time.Second, "widgets served in "+string(c), func(ctx context.Context) (bool, error) {
			_, err := s.Kubectl(c, "apply", "-f", writeFile(t, "w.yaml", widget("w1", "1")))
			return err == nil, nil
		})
	}

	etcd := shardEtcd(t, s)
	keysOf := func(ctx context.Context, c logicalcluster.Name) ([]string, error) { return clusterKeys(ctx, etcd, c) }
	before, err := keysOf(t.Context(), doomed)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 8 {
		t.Fatalf("expected the doomed cluster to have many keys, has %v", before)
	}
	neighbourBefore, err := keysOf(t.Context(), neighbour)
	if err != nil {
		t.Fatal(err)
	}

	s.MustKubectl(t, doomed, "delete", "logicalcluster", "cluster", "--wait=false")
	eventually(t, 60*time.Second, "every key of the deleted cluster to go", func(ctx context.Context) (bool, error) {
		keys, err := keysOf(ctx, doomed)
		if err != nil {
			return false, err
		}
		if len(keys) > 0 {
			return false, fmt.Errorf("keys left: %v", keys)
		}
		return true, nil
	})
	neighbourAfter, err := keysOf(t.Context(), neighbour)
	if err != nil {
		t.Fatal(err)
	}
	if len(neighbourAfter) != len(neighbourBefore) {
		t.Errorf("the neighbour lost keys: %d before, %d after", len(neighbourBefore), len(neighbourAfter))
	}
	// The shard learns that the cluster is gone from its informers, a moment
	// after the last key.
	eventually(t, 10*time.Second, "requests to the deleted cluster to get 403", func(ctx context.Context) (bool, error) {
		_, err := kube(t, s, doomed).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		return apierrors.IsForbidden(err), fmt.Errorf("a request to the deleted cluster: %v, want 403", err)
	})
}

// TestClusterDeletionUnderConcurrentWrites keeps writing into a logical
// cluster while it is deleted: nothing written may outlive it, and a new
// cluster of the same name starts empty.
func TestClusterDeletionUnderConcurrentWrites(t *testing.T) {
	s := framework.StartShard(t)
	name := logicalcluster.Name("busy")
	createCluster(t, s, name)
	client := kube(t, s, name)

	ctx, stop := context.WithCancel(t.Context())
	done := make(chan int)
	go func() {
		created := 0
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}}, metav1.CreateOptions{}); err == nil {
				created++
			}
			if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cr%d", i)}}, metav1.CreateOptions{}); err == nil {
				created++
			}
		}
		done <- created
	}()
	time.Sleep(500 * time.Millisecond)
	s.MustKubectl(t, name, "delete", "logicalcluster", "cluster", "--wait=false")

	etcd := shardEtcd(t, s)
	eventually(t, 60*time.Second, "every key of the deleted cluster to go", func(ctx context.Context) (bool, error) {
		keys, err := clusterKeys(ctx, etcd, name)
		if err != nil {
			return false, err
		}
		if len(keys) > 0 {
			return false, fmt.Errorf("%d keys left, e.g. %s", len(keys), keys[0])
		}
		return true, nil
	})
	// Keep writing a little after the cluster is gone: all refused.
	time.Sleep(500 * time.Millisecond)
	stop()
	if created := <-done; created == 0 {
		t.Fatalf("the writer never succeeded: the test proves nothing")
	}
	if keys, err := clusterKeys(t.Context(), etcd, name); err != nil || len(keys) > 0 {
		t.Fatalf("keys appeared after deletion: %v %v", keys, err)
	}

	createCluster(t, s, name)
	nss, err := client.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		if ns.Name != "default" {
			t.Errorf("the new cluster %s inherited namespace %s", name, ns.Name)
		}
	}
	roles, err := client.RbacV1().ClusterRoles().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(roles.Items) != 0 {
		t.Errorf("the new cluster %s inherited %d clusterroles", name, len(roles.Items))
	}
}
