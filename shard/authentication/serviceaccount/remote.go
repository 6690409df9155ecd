package serviceaccount

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// RemoteConfig configures a Remote authenticator.
type RemoteConfig struct {
	// Local tells whether a logical cluster is on this shard: its tokens
	// are the local authenticator's business.
	Local func(logicalcluster.Name) bool
	// ShardOf returns the client configuration of the other shard that
	// holds a logical cluster (a shard admin's), or false.
	ShardOf func(context.Context, logicalcluster.Name) (*rest.Config, bool)
	// TTL keeps a shard's positive answers, FailureTTL its negative ones;
	// defaults 10 s and 2 s.
	TTL, FailureTTL time.Duration
	// CacheSize bounds the tokens kept; default 4096.
	CacheSize int
}

// Remote authenticates the service account tokens of logical clusters of
// other shards of the installation by asking the shard that holds the
// token's logical cluster (which signed it and has its service account) in
// a TokenReview in that cluster. The token's claims are read unverified,
// only to pick that shard: nothing authenticates on them. The answer, with
// the same user, groups and extra (authentication.kcp.io/cluster-name) as
// on the token's own shard, is kept briefly, by a hash of the token, in one
// bounded cache. Tokens of this shard's clusters, tokens of unknown
// clusters and anything that is not a service account token are left to
// other authenticators (false, no error).
type Remote struct {
	cfg     RemoteConfig
	answers *utilcache.LRUExpireCache
	// clients are the REST clients of the other shards, by URL (one per
	// shard, not per token or logical cluster).
	clients sync.Map
}

var _ authenticator.Token = &Remote{}

// NewRemote returns a Remote authenticator.
func NewRemote(cfg RemoteConfig) *Remote {
	if cfg.TTL <= 0 {
		cfg.TTL = 10 * time.Second
	}
	if cfg.FailureTTL <= 0 {
		cfg.FailureTTL = 2 * time.Second
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = 4096
	}
	return &Remote{cfg: cfg, answers: utilcache.NewLRUExpireCache(cfg.CacheSize)}
}

// remoteAnswer is a kept answer; resp is nil for a token that did not
// authenticate.
type remoteAnswer struct {
	resp *authenticator.Response
}

// AuthenticateToken implements authenticator.Token.
func (r *Remote) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	cluster, ok := tokenCluster(token)
	if !ok || r.cfg.Local(cluster) {
		return nil, false, nil
	}
	key := sha256.Sum256([]byte(token))
	if v, ok := r.answers.Get(key); ok {
		a := v.(remoteAnswer)
		return a.resp, a.resp != nil, nil
	}
	cfg, ok := r.cfg.ShardOf(ctx, cluster)
	if !ok {
		return nil, false, nil
	}
	client, err := r.clientOf(cfg)
	if err != nil {
		return nil, false, err
	}
	review := &authenticationv1.TokenReview{}
	err = client.Post().AbsPath("/clusters", cluster.String(), "apis/authentication.k8s.io/v1/tokenreviews").
		Body(&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}).Do(ctx).Into(review)
	if err != nil {
		// Not kept: the shard may answer the next time.
		return nil, false, fmt.Errorf("reviewing a service account token of logical cluster %s on its shard: %w", cluster, err)
	}
	st := review.Status
	if !st.Authenticated {
		r.answers.Add(key, remoteAnswer{}, r.cfg.FailureTTL)
		return nil, false, nil
	}
	extra := map[string][]string{}
	for k, v := range st.User.Extra {
		extra[k] = v
	}
	resp := &authenticator.Response{
		User:      &user.DefaultInfo{Name: st.User.Username, UID: st.User.UID, Groups: st.User.Groups, Extra: extra},
		Audiences: st.Audiences,
	}
	r.answers.Add(key, remoteAnswer{resp: resp}, r.cfg.TTL)
	return resp, true, nil
}

// clientOf returns the REST client of a shard, made once per shard URL.
func (r *Remote) clientOf(cfg *rest.Config) (rest.Interface, error) {
	if c, ok := r.clients.Load(cfg.Host); ok {
		return c.(rest.Interface), nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c, _ := r.clients.LoadOrStore(cfg.Host, cs.AuthenticationV1().RESTClient())
	return c.(rest.Interface), nil
}

// tokenCluster returns the logical cluster a service account token names
// in its claims, unverified.
func tokenCluster(token string) (logicalcluster.Name, bool) {
	_, payload, err := parseToken(token)
	if err != nil {
		return "", false
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", false
	}
	name := c.LegacyClusterName
	if c.Kubernetes != nil && c.Kubernetes.ClusterName != "" {
		name = c.Kubernetes.ClusterName
	}
	cluster := logicalcluster.Name(name)
	if name == "" || !cluster.IsValid() {
		return "", false
	}
	return cluster, true
}
