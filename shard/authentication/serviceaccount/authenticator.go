package serviceaccount

import (
	"context"
	"crypto"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/token/jwt"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/clock"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ClusterNameExtraKey is the key of the user's extra that names the logical
// cluster of a service account. The workspace content authorizer refuses a
// service account in any other logical cluster.
const ClusterNameExtraKey = "authentication.kcp.io/cluster-name"

// leeway is the clock skew tolerated on exp, nbf and iat, as in Kubernetes.
const leeway = time.Minute

// AuthenticatorConfig configures an Authenticator.
type AuthenticatorConfig struct {
	// Keys verify token signatures: the public key of the shard's signing
	// key and any keys of earlier or other signers.
	Keys []crypto.PublicKey
	// PendingKey, if set, returns one more key that may still be being
	// made (the shard's own, EnsureSigningKeyAsync). The first token
	// verified waits for it.
	PendingKey func() (crypto.PublicKey, error)
	// Issuers are accepted in the "iss" claim of bound tokens; tokens of
	// other issuers are left to other authenticators. Legacy tokens
	// (LegacyIssuer) are always accepted.
	Issuers []string
	// APIAudiences are the audiences a bound token must share one with
	// when the request context names none (authenticator.WithAudiences).
	APIAudiences authenticator.Audiences
	// ServiceAccounts looks up the subjects of tokens.
	ServiceAccounts Lookup[*corev1.ServiceAccount]
	// Secrets looks up the Secrets of legacy tokens and of bound tokens
	// bound to a Secret.
	Secrets Lookup[*corev1.Secret]
	// Clock is the real clock when nil.
	Clock clock.PassiveClock
}

// Authenticator validates service account tokens of every logical cluster
// of a shard: their signature, their expiry and audience (bound tokens),
// and that the service account (and the Secret of legacy or Secret-bound
// tokens) still exists in the token's logical cluster with the UID the
// token names. It does not compare the token's logical cluster with the
// request's: a token used in another cluster authenticates, with the
// token's cluster in the user's extra under ClusterNameExtraKey, and the
// authorizer refuses it. InRequestCluster adds that comparison for
// TokenReview.
type Authenticator struct {
	verifier        *verifier
	issuers         sets.Set[string]
	apiAudiences    authenticator.Audiences
	serviceAccounts Lookup[*corev1.ServiceAccount]
	secrets         Lookup[*corev1.Secret]
	clock           clock.PassiveClock
}

var _ authenticator.Token = &Authenticator{}

// NewAuthenticator returns an Authenticator.
func NewAuthenticator(cfg AuthenticatorConfig) (*Authenticator, error) {
	v, err := newVerifier(cfg.Keys, cfg.PendingKey)
	if err != nil {
		return nil, err
	}
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("at least one service account token issuer is required")
	}
	if len(cfg.APIAudiences) == 0 {
		return nil, errors.New("at least one API audience is required")
	}
	if cfg.ServiceAccounts.Cached == nil || cfg.Secrets.Cached == nil {
		return nil, errors.New("service account and secret lookups are required")
	}
	c := cfg.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	return &Authenticator{
		verifier:        v,
		issuers:         sets.New(cfg.Issuers...),
		apiAudiences:    cfg.APIAudiences,
		serviceAccounts: cfg.ServiceAccounts,
		secrets:         cfg.Secrets,
		clock:           c,
	}, nil
}

// identity is who a valid token stands for.
type identity struct {
	cluster         logicalcluster.Name
	namespace, name string
	uid             string
	jti             string
}

// AuthenticateToken implements authenticator.Token. Tokens that are not
// JWTs of an accepted issuer are not its business: it returns false and no
// error for them, so that other authenticators decide.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	jws, payload, err := parseToken(token)
	if err != nil {
		return nil, false, nil
	}
	var c claims
	if err := decodeStrict(payload, &c); err != nil {
		return nil, false, nil
	}
	legacy := c.Issuer == LegacyIssuer
	if !legacy && !a.issuers.Has(c.Issuer) {
		return nil, false, nil
	}
	if err := a.verifier.verify(jws); err != nil {
		return nil, false, fmt.Errorf("service account token: %w", err)
	}
	var (
		id   identity
		auds authenticator.Audiences
	)
	if legacy {
		id, err = a.validateLegacy(ctx, &c, token)
	} else {
		id, auds, err = a.validateBound(ctx, &c)
	}
	if err != nil {
		return nil, false, fmt.Errorf("service account token: %w", err)
	}
	return &authenticator.Response{User: id.userInfo(), Audiences: auds}, true, nil
}

// validateBound checks the claims of a bound token.
func (a *Authenticator) validateBound(ctx context.Context, c *claims) (identity, authenticator.Audiences, error) {
	k := c.Kubernetes
	if k == nil {
		return identity{}, nil, errors.New("the kubernetes.io claims are missing")
	}
	now := a.clock.Now()
	switch {
	case c.Expiry == 0:
		return identity{}, nil, errors.New("the token has no expiry")
	case now.After(c.Expiry.Time().Add(leeway)):
		return identity{}, nil, errors.New("the token has expired")
	case c.NotBefore != 0 && now.Add(leeway).Before(c.NotBefore.Time()):
		return identity{}, nil, errors.New("the token is not valid yet")
	case c.IssuedAt != 0 && now.Add(leeway).Before(c.IssuedAt.Time()):
		return identity{}, nil, errors.New("the token was issued in the future")
	}
	wanted, ok := authenticator.AudiencesFrom(ctx)
	if !ok {
		wanted = a.apiAudiences
	}
	auds := authenticator.Audiences(c.Audience).Intersect(wanted)
	if len(auds) == 0 {
		return identity{}, nil, fmt.Errorf("the token audiences %q are not valid for %q", []string(c.Audience), []string(wanted))
	}

	id := identity{
		cluster:   logicalcluster.Name(k.ClusterName),
		namespace: k.Namespace,
		name:      k.ServiceAccount.Name,
		uid:       k.ServiceAccount.UID,
		jti:       c.ID,
	}
	if err := id.validate(c.Subject); err != nil {
		return identity{}, nil, err
	}
	if k.Secret != nil {
		if k.Secret.Name == "" || k.Secret.UID == "" {
			return identity{}, nil, errors.New("the bound secret has no name or UID")
		}
		secret, err := a.secret(ctx, id, k.Secret.Name, HasUID[*corev1.Secret](types.UID(k.Secret.UID)))
		if err != nil {
			return identity{}, nil, err
		}
		if string(secret.UID) != k.Secret.UID {
			return identity{}, nil, fmt.Errorf("secret %s/%s of logical cluster %s has UID %s, the token is bound to %s", id.namespace, k.Secret.Name, id.cluster, secret.UID, k.Secret.UID)
		}
	}
	if err := a.serviceAccount(ctx, id); err != nil {
		return identity{}, nil, err
	}
	return id, auds, nil
}

// validateLegacy checks the claims of a legacy token, which must also
// equal the token in its Secret.
func (a *Authenticator) validateLegacy(ctx context.Context, c *claims, token string) (identity, error) {
	id := identity{
		cluster:   logicalcluster.Name(c.LegacyClusterName),
		namespace: c.LegacyNamespace,
		name:      c.LegacyServiceAccountName,
		uid:       c.LegacyServiceAccountUID,
	}
	if err := id.validate(c.Subject); err != nil {
		return identity{}, err
	}
	if c.LegacySecretName == "" {
		return identity{}, errors.New("the secret name claim is missing")
	}
	// The cache may not have seen the token the controller just wrote.
	holdsToken := func(s *corev1.Secret) bool {
		return subtle.ConstantTimeCompare(s.Data[corev1.ServiceAccountTokenKey], []byte(token)) == 1
	}
	secret, err := a.secret(ctx, id, c.LegacySecretName, holdsToken)
	if err != nil {
		return identity{}, err
	}
	if !holdsToken(secret) {
		return identity{}, fmt.Errorf("the token does not match the one in secret %s/%s of logical cluster %s", id.namespace, c.LegacySecretName, id.cluster)
	}
	if err := a.serviceAccount(ctx, id); err != nil {
		return identity{}, err
	}
	return id, nil
}

// validate checks that the identity is complete and matches the subject.
func (id identity) validate(subject string) error {
	if !id.cluster.IsValid() {
		return fmt.Errorf("the token names no valid logical cluster (%q)", id.cluster)
	}
	if id.namespace == "" || id.name == "" || id.uid == "" {
		return errors.New("the token does not name a service account with its namespace and UID")
	}
	if subject != apiserverserviceaccount.MakeUsername(id.namespace, id.name) {
		return fmt.Errorf("the subject %q does not match the service account claims", subject)
	}
	return nil
}

// serviceAccount checks that the identity's service account exists with
// its UID and is not being deleted.
func (a *Authenticator) serviceAccount(ctx context.Context, id identity) error {
	sa, err := a.serviceAccounts.Get(ctx, id.cluster, id.namespace, id.name, HasUID[*corev1.ServiceAccount](types.UID(id.uid)))
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("service account %s/%s of logical cluster %s does not exist", id.namespace, id.name, id.cluster)
	case err != nil:
		return fmt.Errorf("looking up service account %s/%s of logical cluster %s: %w", id.namespace, id.name, id.cluster, err)
	case string(sa.UID) != id.uid:
		return fmt.Errorf("service account %s/%s of logical cluster %s has UID %s, the token was issued for %s", id.namespace, id.name, id.cluster, sa.UID, id.uid)
	case sa.DeletionTimestamp != nil:
		return fmt.Errorf("service account %s/%s of logical cluster %s is being deleted", id.namespace, id.name, id.cluster)
	}
	return nil
}

// secret returns the Secret name of the identity's namespace and cluster if
// it exists and is not being deleted; accept (if not nil) tells when the
// cached Secret is not good enough and the API server must be asked.
func (a *Authenticator) secret(ctx context.Context, id identity, name string, accept func(*corev1.Secret) bool) (*corev1.Secret, error) {
	secret, err := a.secrets.Get(ctx, id.cluster, id.namespace, name, accept)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("secret %s/%s of logical cluster %s does not exist", id.namespace, name, id.cluster)
	case err != nil:
		return nil, fmt.Errorf("looking up secret %s/%s of logical cluster %s: %w", id.namespace, name, id.cluster, err)
	case secret.DeletionTimestamp != nil:
		return nil, fmt.Errorf("secret %s/%s of logical cluster %s is being deleted", id.namespace, name, id.cluster)
	}
	return secret, nil
}

// userInfo returns the user a token authenticates as.
func (id identity) userInfo() user.Info {
	info := &apiserverserviceaccount.ServiceAccountInfo{
		Name:         id.name,
		Namespace:    id.namespace,
		UID:          id.uid,
		CredentialID: jwt.CredentialIDForJTI(id.jti),
	}
	u := info.UserInfo().(*user.DefaultInfo)
	if u.Extra == nil {
		u.Extra = map[string][]string{}
	}
	u.Extra[ClusterNameExtraKey] = []string{id.cluster.String()}
	return u
}
