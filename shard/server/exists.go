package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/storage"
)

// clusterExists tells whether a logical cluster exists: its LogicalCluster is
// in the informer cache, or, on a miss (the cache may lag a fresh create), in
// etcd.
func (s *Server) clusterExists(name logicalcluster.Name) (bool, error) {
	_, err := s.logicalClusters.Lister().Cluster(name).Get(corev1alpha1.LogicalClusterName)
	switch {
	case err == nil:
		return true, nil
	case !apierrors.IsNotFound(err):
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := strings.TrimSuffix(s.EtcdPrefix, "/") + storage.ResourcePrefix(corev1alpha1.Resource("logicalclusters")) + "/" + string(name) + "/" + corev1alpha1.LogicalClusterName
	resp, err := s.etcdClient.Get(ctx, key, clientCountOnly()...)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", key, err)
	}
	return resp.Count > 0, nil
}
