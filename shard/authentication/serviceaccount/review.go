package serviceaccount

import (
	"context"
	"errors"

	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// errOtherCluster refuses a service account token in TokenReview of another
// logical cluster.
var errOtherCluster = errors.New("the service account token belongs to another logical cluster")

// InRequestCluster wraps a token authenticator for TokenReview, which
// evaluates a token in the logical cluster it is created in: a service
// account token (one whose user names its cluster under
// ClusterNameExtraKey) is accepted only when that is the cluster of the
// request context, or that is system:admin. Other tokens pass unchanged.
func InRequestCluster(tokens authenticator.Token) authenticator.Token {
	return authenticator.TokenFunc(func(ctx context.Context, token string) (*authenticator.Response, bool, error) {
		resp, ok, err := tokens.AuthenticateToken(ctx, token)
		if !ok || resp == nil || resp.User == nil {
			return resp, ok, err
		}
		clusters, isServiceAccount := resp.User.GetExtra()[ClusterNameExtraKey]
		if !isServiceAccount {
			return resp, ok, err
		}
		c, found := logicalcluster.ClusterFrom(ctx)
		if found && c.Name == logicalcluster.SystemAdmin {
			// The shard's admins (system:masters alone reach
			// system:admin), such as tessera-virtual-workspaces, review
			// the tokens of every logical cluster; the user's extra names
			// its cluster, where alone the authorizer lets it in.
			return resp, ok, err
		}
		if !found || c.Wildcard || len(clusters) != 1 || clusters[0] != c.Name.String() {
			return nil, false, errOtherCluster
		}
		return resp, ok, err
	})
}
