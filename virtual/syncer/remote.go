package syncer

import (
	"context"
	"net/http"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/accessreview"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// A SyncTarget's workspace may be on another shard than the workspaces
// its syncer serves here: the syncer watches the syncer virtual workspace
// of every shard. Config.Remote then names that shard, which alone has the
// SyncTarget and the RBAC that lets its syncer in: the SyncTarget is read
// there, and "sync" on it is asked there in a SubjectAccessReview (answers
// kept as accessreview keeps them). The objects are still this shard's.

// remoteTargets reaches the shards of SyncTargets of other shards.
type remoteTargets struct {
	find func(context.Context, logicalcluster.Name) (*rest.Config, bool)
	// authz asks the SyncTarget's shard.
	authz *accessreview.Authorizer
	// shards are the base URLs and transports by host.
	shards sync.Map
}

// remoteShard is one shard's connection.
type remoteShard struct {
	base      string
	transport http.RoundTripper
	authz     rest.Interface
}

// remoteAnswerTTL keeps the remote shard's allowing answers (denials are
// asked again).
const remoteAnswerTTL = 10 * time.Second

func newRemoteTargets(local *rest.Config, find func(context.Context, logicalcluster.Name) (*rest.Config, bool)) (*remoteTargets, error) {
	kube, err := kubernetes.NewForConfig(local)
	if err != nil {
		return nil, err
	}
	r := &remoteTargets{find: find}
	r.authz, err = accessreview.New(accessreview.Config{Client: kube.AuthorizationV1().RESTClient(), AllowTTL: remoteAnswerTTL, CacheSize: 4096})
	if err != nil {
		return nil, err
	}
	r.authz.RouteBy(func(cluster logicalcluster.Name) (rest.Interface, bool) {
		sh, ok := r.shard(context.Background(), cluster)
		if !ok {
			return nil, false
		}
		return sh.authz, true
	})
	return r, nil
}

// shard returns the connection of the other shard holding cluster, or
// false when it is this shard's (or unknown).
func (r *remoteTargets) shard(ctx context.Context, cluster logicalcluster.Name) (*remoteShard, bool) {
	cfg, ok := r.find(ctx, cluster)
	if !ok {
		return nil, false
	}
	if sh, ok := r.shards.Load(cfg.Host); ok {
		return sh.(*remoteShard), true
	}
	base, transport, err := forward.Shard(cfg)
	if err != nil {
		return nil, false
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, false
	}
	sh, _ := r.shards.LoadOrStore(cfg.Host, &remoteShard{base: base, transport: transport, authz: kube.AuthorizationV1().RESTClient()})
	return sh.(*remoteShard), true
}

// authorizer returns the authorizer of a SyncTarget's cluster: the
// remote one when the cluster is on another shard.
func (h *handler) authorizerFor(ctx context.Context, cluster logicalcluster.Name) authorizer.Authorizer {
	if h.remote != nil {
		if _, ok := h.remote.shard(ctx, cluster); ok {
			return h.remote.authz
		}
	}
	return h.cfg.Authorizer
}

// shardFor returns the base URL and transport that reach a SyncTarget's
// cluster.
func (h *handler) shardFor(ctx context.Context, cluster logicalcluster.Name) (string, http.RoundTripper) {
	if h.remote != nil {
		if sh, ok := h.remote.shard(ctx, cluster); ok {
			return sh.base, sh.transport
		}
	}
	return h.base, h.transport
}
