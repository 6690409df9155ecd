package server

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Logical clusters of other shards are reached through their shard's base
// URL (the Shard objects of root, replicated to every shard), with the
// shard's admin client certificate from the installation CA, as the
// workspace controller creates them. Nothing is watched across shards.

// kcpFor returns a kcp client of cluster on the shard named shard: the
// loopback when it is this shard.
func (s *Server) kcpFor(shard string, cluster logicalcluster.Name) (*kcpclient.Clientset, error) {
	if shard == "" || shard == s.Options.ShardName {
		return s.kcpClients.For(cluster)
	}
	sh, err := s.shards.Lister().Cluster(logicalcluster.Root).Get(shard)
	if err != nil {
		return nil, fmt.Errorf("shard %q: %w", shard, err)
	}
	cfg, err := s.shardConfig(sh)
	if err != nil {
		return nil, err
	}
	cfg.Host += "/clusters/" + cluster.String()
	return kcpclient.NewForConfig(cfg)
}

// onlyShard tells whether this shard is the only one of its installation,
// as far as root's Shards say (a joining shard never is).
func (s *Server) onlyShard() bool {
	if !s.Options.IsRoot() {
		return false
	}
	shards, err := s.shards.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, sh := range shards {
		if sh.Name != s.Options.ShardName {
			return false
		}
	}
	return true
}

// isNotFoundStatus tells whether err is the API server's NotFound status
// about an object, not a 404 of something else on the way (a wrong URL, a
// proxy).
func isNotFoundStatus(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsNotFound(err) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Name != ""
}

// remoteCluster returns the client configuration of the other shard that
// holds cluster, or false when it is on this shard or unknown.
func (s *Server) remoteCluster(ctx context.Context, cluster logicalcluster.Name) (*rest.Config, bool) {
	if _, err := s.logicalClusters.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName); err == nil {
		return nil, false
	}
	cfg, _, ok := s.locator.Find(ctx, cluster)
	return cfg, ok
}
