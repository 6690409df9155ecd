package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestOrphanedKeysAreSwept: a write that lands after its logical cluster
// was deleted (here written to etcd directly, as a write admitted before
// the deletion and slower than its last pass would) does not stay: the
// object-count scanner finds keys without a LogicalCluster and removes
// them. Another cluster's keys and the system cluster's stay.
func TestOrphanedKeysAreSwept(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) {
		o.LogicalClusterObjectScanInterval = 200 * time.Millisecond
	})
	gone, kept := logicalcluster.Name("orphan-gone"), logicalcluster.Name("orphan-kept")
	ctx := t.Context()
	for _, c := range []logicalcluster.Name{gone, kept} {
		createCluster(t, s, c)
		if _, err := kube(t, s, c).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	etcd := shardEtcd(t, s)
	if err := dynamicFor(t, s, gone).Resource(logicalClusterGVR).Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the keys of "+string(gone)+" to be deleted with it", func(ctx context.Context) (bool, error) {
		keys, err := clusterKeys(ctx, etcd, gone)
		return len(keys) == 0, err
	})
	keptBefore, err := clusterKeys(ctx, etcd, kept)
	if err != nil {
		t.Fatal(err)
	}
	systemBefore, err := clusterKeys(ctx, etcd, logicalcluster.SystemAdmin)
	if err != nil {
		t.Fatal(err)
	}

	late := "/registry/configmaps/" + string(gone) + "/default/late"
	if _, err := etcd.Put(ctx, late, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late","namespace":"default","annotations":{"kcp.io/cluster":"`+string(gone)+`"}}}`); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the late key of "+string(gone)+" to be swept", func(ctx context.Context) (bool, error) {
		keys, err := clusterKeys(ctx, etcd, gone)
		return len(keys) == 0, err
	})
	keptAfter, err := clusterKeys(ctx, etcd, kept)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keptAfter, ",") != strings.Join(keptBefore, ",") {
		t.Errorf("the keys of %s changed:\nbefore %v\nafter  %v", kept, keptBefore, keptAfter)
	}
	systemAfter, err := clusterKeys(ctx, etcd, logicalcluster.SystemAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if len(systemAfter) < len(systemBefore) {
		t.Errorf("keys of %s were deleted: %d before, %d after", logicalcluster.SystemAdmin, len(systemBefore), len(systemAfter))
	}
}
