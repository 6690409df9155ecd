package serviceaccount

import (
	"crypto"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/utils/clock"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Issuer mints service account tokens signed with the shard's key. It is
// safe for concurrent use.
type Issuer struct {
	// signer returns the signer, once the key is there (NewPendingIssuer).
	signer func() (*signer, error)
	issuer string
	clock  clock.PassiveClock
}

// NewIssuer returns an Issuer that signs with key and names issuer in the
// "iss" claim of bound tokens. A nil clock is the real clock.
func NewIssuer(key crypto.Signer, issuer string, c clock.PassiveClock) (*Issuer, error) {
	i, err := NewPendingIssuer(func() (crypto.Signer, error) { return key, nil }, issuer, c)
	if err != nil {
		return nil, err
	}
	if _, err := i.signer(); err != nil {
		return nil, err
	}
	return i, nil
}

// NewPendingIssuer is NewIssuer with a key that may still be being made
// (EnsureSigningKeyAsync): the first token waits for it, and an error
// getting it is every token's error.
func NewPendingIssuer(key func() (crypto.Signer, error), issuer string, c clock.PassiveClock) (*Issuer, error) {
	if issuer == "" {
		return nil, errors.New("a service account token issuer is required")
	}
	if issuer == LegacyIssuer {
		return nil, fmt.Errorf("the service account token issuer must not be %q, the issuer of legacy tokens", LegacyIssuer)
	}
	if c == nil {
		c = clock.RealClock{}
	}
	signerOf := sync.OnceValues(func() (*signer, error) {
		k, err := key()
		if err != nil {
			return nil, err
		}
		s, err := newSigner(k)
		if err != nil {
			return nil, fmt.Errorf("service account signing key: %w", err)
		}
		return s, nil
	})
	return &Issuer{signer: signerOf, issuer: issuer, clock: c}, nil
}

// Name returns the issuer named in the "iss" claim of bound tokens.
func (i *Issuer) Name() string { return i.issuer }

// PublicKey returns the public key that verifies the Issuer's tokens.
func (i *Issuer) PublicKey() (crypto.PublicKey, error) {
	s, err := i.signer()
	if err != nil {
		return nil, err
	}
	return s.public, nil
}

// BoundToken describes a bound token.
type BoundToken struct {
	// Cluster is the logical cluster of the service account.
	Cluster logicalcluster.Name
	// ServiceAccount is the token's subject; its UID is part of the token.
	ServiceAccount *corev1.ServiceAccount
	// Secret, if set, is the object the token is bound to: the token is
	// valid only while a Secret of that name and UID exists.
	Secret *corev1.Secret
	// Audiences are the token's audiences; at least one is required.
	Audiences []string
	// Expiration is the token's lifetime; it must be positive.
	Expiration time.Duration
}

// IssuedToken is a signed bound token.
type IssuedToken struct {
	// Token is the compact JWT.
	Token string
	// Expires is the time the token expires.
	Expires time.Time
	// ID is the token's "jti" claim, for audit.
	ID string
}

// Bound returns a signed bound token.
func (i *Issuer) Bound(t BoundToken) (IssuedToken, error) {
	switch {
	case t.Cluster.Empty() || t.Cluster == logicalcluster.Wildcard:
		return IssuedToken{}, fmt.Errorf("a bound service account token needs a logical cluster, not %q", t.Cluster)
	case t.ServiceAccount == nil || t.ServiceAccount.Name == "" || t.ServiceAccount.Namespace == "" || t.ServiceAccount.UID == "":
		return IssuedToken{}, errors.New("a bound service account token needs a service account with a name, a namespace and a UID")
	case t.Secret != nil && (t.Secret.Name == "" || t.Secret.UID == ""):
		return IssuedToken{}, errors.New("a bound service account token needs a secret with a name and a UID")
	case len(t.Audiences) == 0:
		return IssuedToken{}, errors.New("a bound service account token needs at least one audience")
	case t.Expiration <= 0:
		return IssuedToken{}, fmt.Errorf("a bound service account token needs a positive expiration, not %s", t.Expiration)
	}
	now := i.clock.Now()
	exp := now.Add(t.Expiration)
	sa := t.ServiceAccount
	c := claims{
		Issuer:    i.issuer,
		Subject:   apiserverserviceaccount.MakeUsername(sa.Namespace, sa.Name),
		Audience:  audience(t.Audiences),
		Expiry:    newNumericDate(exp),
		NotBefore: newNumericDate(now),
		IssuedAt:  newNumericDate(now),
		ID:        string(uuid.NewUUID()),
		Kubernetes: &privateClaims{
			ClusterName:    t.Cluster.String(),
			Namespace:      sa.Namespace,
			ServiceAccount: ref{Name: sa.Name, UID: string(sa.UID)},
		},
	}
	if t.Secret != nil {
		c.Kubernetes.Secret = &ref{Name: t.Secret.Name, UID: string(t.Secret.UID)}
	}
	s, err := i.signer()
	if err != nil {
		return IssuedToken{}, err
	}
	token, err := s.sign(c)
	if err != nil {
		return IssuedToken{}, err
	}
	return IssuedToken{Token: token, Expires: c.Expiry.Time(), ID: c.ID}, nil
}

// Legacy returns the never-expiring token of the legacy token Secret secret
// of service account sa in cluster. It is valid while both exist.
func (i *Issuer) Legacy(cluster logicalcluster.Name, sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error) {
	switch {
	case cluster.Empty() || cluster == logicalcluster.Wildcard:
		return "", fmt.Errorf("a service account token needs a logical cluster, not %q", cluster)
	case sa == nil || sa.Name == "" || sa.Namespace == "" || sa.UID == "":
		return "", errors.New("a service account token needs a service account with a name, a namespace and a UID")
	case secret == nil || secret.Name == "" || secret.Namespace != sa.Namespace:
		return "", errors.New("a legacy service account token needs a secret in the namespace of its service account")
	}
	s, err := i.signer()
	if err != nil {
		return "", err
	}
	return s.sign(claims{
		Issuer:  LegacyIssuer,
		Subject: apiserverserviceaccount.MakeUsername(sa.Namespace, sa.Name),
		legacyClaims: legacyClaims{
			LegacyNamespace:          sa.Namespace,
			LegacySecretName:         secret.Name,
			LegacyServiceAccountName: sa.Name,
			LegacyServiceAccountUID:  string(sa.UID),
			LegacyClusterName:        cluster.String(),
		},
	})
}
