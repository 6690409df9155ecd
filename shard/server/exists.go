package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/filters"
	"github.com/tessera-dev/tessera/shard/storage"
)

// clusterState tells whether a logical cluster exists and is being deleted:
// from the informer cache, or, on a miss (the cache may lag a fresh
// create), from etcd.
func (s *Server) clusterState(name logicalcluster.Name) (filters.ClusterState, error) {
	lc, err := s.logicalClusters.Lister().Cluster(name).Get(corev1alpha1.LogicalClusterName)
	switch {
	case err == nil:
		return stateOf(lc), nil
	case !apierrors.IsNotFound(err):
		return filters.ClusterState{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.etcdClient.Get(ctx, s.logicalClusterKey(name), clientv3.WithCountOnly())
	if err != nil {
		return filters.ClusterState{}, fmt.Errorf("reading the LogicalCluster of %s: %w", name, err)
	}
	return filters.ClusterState{Exists: resp.Count > 0}, nil
}

func stateOf(lc *corev1alpha1.LogicalCluster) filters.ClusterState {
	return filters.ClusterState{Exists: true, Deleting: lc.GetDeletionTimestamp() != nil}
}

// logicalClusterKey is the etcd key of a cluster's LogicalCluster.
func (s *Server) logicalClusterKey(name logicalcluster.Name) string {
	return strings.TrimSuffix(s.EtcdPrefix, "/") + storage.ResourcePrefix(corev1alpha1.Resource("logicalclusters")) + "/" + string(name) + "/" + corev1alpha1.LogicalClusterName
}
