package server

import (
	"context"
	"fmt"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/storage"
)

// orphanedKeys removes the keys of logical clusters that no longer exist.
// Deleting a LogicalCluster removes its content before the LogicalCluster
// itself, and passes once more 2 s after the deletion started, but a write
// admitted before the shard saw the deletion and slower than that lands
// after the last pass and would stay forever. The object-count scanner
// reads every key of the shard each scan interval; a cluster that has keys
// but no LogicalCluster at two scans in a row, and none in etcd either,
// has its keys range-deleted. System clusters (system:*) and root are
// never touched.
type orphanedKeys struct {
	s *Server

	mu sync.Mutex
	// suspects are the clusters without a LogicalCluster at the last scan.
	suspects map[logicalcluster.Name]bool
}

// afterScan is the object-count scanner's hook.
func (o *orphanedKeys) afterScan(ctx context.Context, counts map[logicalcluster.Name]int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	logger := klog.FromContext(ctx)
	current := map[logicalcluster.Name]bool{}
	for c, n := range counts {
		if n == 0 || c.IsSystem() || c == logicalcluster.Root || !c.IsValid() {
			continue
		}
		if _, err := o.s.logicalClusters.Lister().Cluster(c).Get(corev1alpha1.LogicalClusterName); err == nil {
			continue
		}
		current[c] = true
	}
	for c := range current {
		if !o.suspects[c] {
			continue // the informer may lag behind a new cluster: look again next scan
		}
		stored, err := o.s.logicalClusterStored(ctx, c)
		if err != nil || stored {
			continue
		}
		deleted, err := o.s.deleteOrphanedKeys(ctx, c)
		if err != nil {
			logger.Error(err, "Deleting the keys of a logical cluster that does not exist", "cluster", c)
			continue
		}
		logger.Info("Deleted the keys of a logical cluster that does not exist", "cluster", c, "keys", deleted)
	}
	o.suspects = current
}

// logicalClusterStored tells whether the LogicalCluster of c is in etcd.
func (s *Server) logicalClusterStored(ctx context.Context, c logicalcluster.Name) (bool, error) {
	prefix := s.CompletedConfig.Storage.PrefixOf(schema.GroupResource{Group: corev1alpha1.SchemeGroupVersion.Group, Resource: "logicalclusters"})
	resp, err := s.etcdClient.Get(ctx, storage.ClusterPrefix(s.CompletedConfig.EtcdPrefix, prefix, c), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return false, err
	}
	return resp.Count > 0, nil
}

// deleteOrphanedKeys range-deletes the content of a logical cluster that
// has no LogicalCluster: there is nobody to honour finalizers for.
func (s *Server) deleteOrphanedKeys(ctx context.Context, c logicalcluster.Name) (int64, error) {
	var total int64
	for pass := 1; pass <= maxDeletionPasses; pass++ {
		ranges, err := s.contentRanges(ctx, c)
		if err != nil {
			return total, err
		}
		scan, err := storage.ScanContent(ctx, s.etcdClient, ranges, func(int, []byte, []byte) error { return nil })
		if err != nil {
			return total, err
		}
		if scan.Keys == 0 {
			return total, nil
		}
		deleted, _, err := storage.DeleteScanned(ctx, s.etcdClient, scan)
		total += deleted
		if err != nil {
			return total, err
		}
	}
	return total, fmt.Errorf("the keys of %s keep changing after %d passes", c, maxDeletionPasses)
}
