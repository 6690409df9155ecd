package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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

// errShardUnavailable means a shard could not tell.
var errShardUnavailable = errors.New("a shard could not be asked")

// findCluster asks every other shard whether it holds cluster, and returns
// the one that does. found is false only when every shard answered that
// it does not; a shard that cannot be asked gives errShardUnavailable.
func (s *Server) findCluster(ctx context.Context, cluster logicalcluster.Name) (shard string, found bool, err error) {
	shards, err := s.shards.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
	if err != nil {
		return "", false, err
	}
	// Only a complete list of shards can say that no shard has it: the
	// cache's replicas must have synced, and this shard must be among
	// them (or among root's own Shards on the root shard).
	if !s.global.Shards().Informer().HasSynced() || !slices.ContainsFunc(shards, func(sh *corev1alpha1.Shard) bool { return sh.Name == s.Options.ShardName }) {
		return "", false, fmt.Errorf("%w: the list of shards is not known yet", errShardUnavailable)
	}
	var errs []error
	for _, sh := range shards {
		if sh.Name == s.Options.ShardName {
			continue
		}
		client, err := s.kcpFor(sh.Name, cluster)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		_, err = client.LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		switch {
		case err == nil:
			return sh.Name, true, nil
		case isNotFoundStatus(err):
		default:
			errs = append(errs, fmt.Errorf("shard %s: %w", sh.Name, err))
		}
	}
	if len(errs) > 0 {
		return "", false, fmt.Errorf("%w: %w", errShardUnavailable, errors.Join(errs...))
	}
	return "", false, nil
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
