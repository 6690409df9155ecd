package authentication

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/shard/authentication/serviceaccount"
)

// Deps are the parts of the running shard that service account tokens
// need. They serve all logical clusters: nothing is created per cluster.
type Deps struct {
	// ServiceAccounts is the shard's wildcard informer of service accounts.
	ServiceAccounts informers.Informer[*corev1.ServiceAccount]
	// TokenSecrets is a wildcard informer of the Secrets of type
	// kubernetes.io/service-account-token (see NewTokenSecretInformers).
	TokenSecrets informers.Informer[*corev1.Secret]
	// Clients read what the informers do not have yet, through the
	// shard's loopback connection.
	Clients *clusters.ClusterClientset
	// Remote, if set, authenticates the service account tokens of logical
	// clusters of other shards (serviceaccount.Remote).
	Remote authenticator.Token
}

// Authentication is the assembled authentication of a shard.
type Authentication struct {
	// Request authenticates requests (AuthenticationInfo.Authenticator):
	// request headers of a trusted front-proxy, client certificates, static
	// tokens and service account tokens, all with system:authenticated
	// added; and GET/HEAD of the health paths and /version as
	// system:anonymous. Anonymous requests for anything else are refused.
	// A user who impersonates someone is limited to the request's logical
	// cluster (scopeImpersonators).
	Request authenticator.Request
	// TokenReview authenticates the tokens of TokenReviews
	// (reviews.NewTokenReviews): static tokens, and service account tokens
	// of the logical cluster the review is created in.
	TokenReview authenticator.Token
	// TokenRequest is the storage of serviceaccounts/token in the core
	// group.
	TokenRequest *serviceaccount.TokenREST
	// ServiceAccountTokens is the service account token authenticator
	// alone.
	ServiceAccountTokens *serviceaccount.Authenticator
}

// New assembles the shard's authentication.
func (c *Config) New(deps Deps) (*Authentication, error) {
	if deps.ServiceAccounts.Informer() == nil || deps.TokenSecrets.Informer() == nil || deps.Clients == nil {
		return nil, errors.New("authentication needs the service account and token secret informers and the shard's clients")
	}
	serviceAccounts := serviceaccount.NewServiceAccountLookup(deps.ServiceAccounts, deps.Clients)
	secrets := serviceaccount.NewSecretLookup(deps.TokenSecrets, deps.Clients)

	saTokens, err := serviceaccount.NewAuthenticator(serviceaccount.AuthenticatorConfig{
		Keys:            c.publicKeys,
		PendingKey:      c.issuer.PublicKey,
		Issuers:         c.issuers,
		APIAudiences:    c.apiAudiences,
		ServiceAccounts: serviceAccounts,
		Secrets:         secrets,
	})
	if err != nil {
		return nil, fmt.Errorf("service account token authenticator: %w", err)
	}
	tokenRequest, err := serviceaccount.NewTokenREST(serviceaccount.TokenRESTConfig{
		Issuer:          c.issuer,
		ServiceAccounts: serviceAccounts,
		Secrets:         secrets,
		APIAudiences:    c.apiAudiences,
		MaxExpiration:   c.maxExpiration,
	})
	if err != nil {
		return nil, fmt.Errorf("serviceaccounts/token: %w", err)
	}

	tokens := []authenticator.Token{saTokens}
	if c.staticTokens != nil {
		tokens = []authenticator.Token{c.staticTokens, saTokens}
	}
	if deps.Remote != nil {
		tokens = append(tokens, deps.Remote)
	}
	// Cache audit (issue 9): not cluster-dependent: no token cache
	// (k8s.io/apiserver's token/cache) is wired; static tokens and client
	// certificates name the same user in every cluster, authorization
	// decides per cluster, and service account tokens are checked against
	// their own cluster (cluster-keyed lookups).
	anyToken := tokenunion.New(tokens...)

	var authenticators []authenticator.Request
	if rh := c.requestHeader; rh != nil {
		// The front-proxy comes first, as in Kubernetes: its client
		// certificate may also be valid for the client CA.
		authenticators = append(authenticators, headerrequest.NewDynamicVerifyOptionsSecure(
			rh.CAContentProvider.VerifyOptions, rh.AllowedClientNames,
			rh.UsernameHeaders, rh.UIDHeaders, rh.GroupHeaders, rh.ExtraHeaderPrefixes))
	}
	authenticators = append(authenticators,
		x509.NewDynamic(c.clientCA.VerifyOptions, x509.CommonNameUserConversion),
		bearertoken.New(anyToken),
		websocket.NewProtocolAuthenticator(anyToken),
	)

	return &Authentication{
		Request:              scopeImpersonators(union.New(group.NewAuthenticatedGroupAdder(union.New(authenticators...)), healthAnonymous{})),
		TokenReview:          withAuthenticatedGroup(serviceaccount.InRequestCluster(anyToken)),
		TokenRequest:         tokenRequest,
		ServiceAccountTokens: saTokens,
	}, nil
}

// withAuthenticatedGroup adds system:authenticated to the users of tokens,
// as the request authenticator does, so that TokenReview reports the
// groups a request with the token would have.
func withAuthenticatedGroup(tokens authenticator.Token) authenticator.Token {
	return authenticator.TokenFunc(func(ctx context.Context, token string) (*authenticator.Response, bool, error) {
		resp, ok, err := tokens.AuthenticateToken(ctx, token)
		if !ok || resp == nil || resp.User == nil || slices.Contains(resp.User.GetGroups(), user.AllAuthenticated) {
			return resp, ok, err
		}
		u := resp.User
		withGroup := *resp
		withGroup.User = &user.DefaultInfo{
			Name:   u.GetName(),
			UID:    u.GetUID(),
			Groups: append(slices.Clip(u.GetGroups()), user.AllAuthenticated),
			Extra:  u.GetExtra(),
		}
		return &withGroup, ok, err
	})
}
