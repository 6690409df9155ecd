package authentication

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	"github.com/tessera-dev/tessera/shard/authentication/serviceaccount"
)

const (
	// DefaultIssuer is the "iss" of the shard's bound service account
	// tokens unless --service-account-issuer names others. It is fixed
	// rather than the shard's URL, so that tokens survive a change of
	// address and shards sharing a key accept each other's tokens.
	DefaultIssuer = "https://tessera.dev"
	// DefaultMaxTokenExpiration bounds the lifetime of tokens TokenRequest
	// issues unless --service-account-max-token-expiration says otherwise.
	DefaultMaxTokenExpiration = 48 * time.Hour
)

// Options are the authentication flags of a shard.
type Options struct {
	// ClientCAFile verifies client certificates; the shard's generated CA
	// when empty.
	ClientCAFile string
	// TokenAuthFile holds static tokens in the Kubernetes CSV format.
	TokenAuthFile string
	// RequestHeader configures authentication by request headers set by a
	// trusted front-proxy, whose client certificate the request-header CA
	// verifies. Off while RequestHeader.ClientCAFile is empty.
	RequestHeader genericoptions.RequestHeaderAuthenticationOptions
	// ServiceAccounts configures service account tokens.
	ServiceAccounts ServiceAccountOptions
}

// ServiceAccountOptions configure service account tokens.
type ServiceAccountOptions struct {
	// SigningKeyFile is the PEM private key that signs tokens; empty means
	// <root>/certs/sa.key, created on first start.
	SigningKeyFile string
	// KeyFiles hold further PEM public (or private) keys that verify
	// tokens, for key rotation.
	KeyFiles []string
	// Issuers are accepted in the "iss" claim; the first one issues.
	Issuers []string
	// APIAudiences are the audiences of the shard's API: tokens must name
	// one of them, and TokenRequests without audiences get them. Empty
	// means the issuers.
	APIAudiences []string
	// MaxTokenExpiration shortens longer lifetimes TokenRequests ask for;
	// zero means no maximum.
	MaxTokenExpiration time.Duration
}

// NewOptions returns the defaults: request-header authentication off (but
// with the standard header names ready), service account tokens issued by
// DefaultIssuer for at most DefaultMaxTokenExpiration.
func NewOptions() *Options {
	return &Options{
		RequestHeader: genericoptions.RequestHeaderAuthenticationOptions{
			UsernameHeaders:     []string{"X-Remote-User"},
			GroupHeaders:        []string{"X-Remote-Group"},
			ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
		},
		ServiceAccounts: ServiceAccountOptions{
			Issuers:            []string{DefaultIssuer},
			MaxTokenExpiration: DefaultMaxTokenExpiration,
		},
	}
}

// AddFlags registers the authentication flags in fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that verifies client certificates (default: the shard's generated CA).")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "Static tokens, in the Kubernetes CSV format: token,user,uid,\"group1,group2\".")
	o.RequestHeader.AddFlags(fs)

	sa := &o.ServiceAccounts
	fs.StringVar(&sa.SigningKeyFile, "service-account-signing-key-file", sa.SigningKeyFile, "PEM private key (RSA or ECDSA) that signs service account tokens (default: <root-directory>/certs/"+serviceaccount.SigningKeyFile+", created on first start).")
	fs.StringArrayVar(&sa.KeyFiles, "service-account-key-file", sa.KeyFiles, "PEM file with further public or private keys that verify service account tokens, for key rotation. Can be repeated.")
	fs.StringArrayVar(&sa.Issuers, "service-account-issuer", sa.Issuers, "Issuer of service account tokens. Can be repeated: the first issues, all are accepted.")
	fs.StringSliceVar(&sa.APIAudiences, "api-audiences", sa.APIAudiences, "Audiences of the API: service account tokens must name one of them, and tokens requested without audiences get them (default: the service account issuers).")
	fs.DurationVar(&sa.MaxTokenExpiration, "service-account-max-token-expiration", sa.MaxTokenExpiration, "Longest lifetime of a token issued by TokenRequest; longer requests are shortened. 0 means no maximum.")
}

// Validate reports every problem with the options.
func (o *Options) Validate() []error {
	errs := o.RequestHeader.Validate()
	if o.RequestHeader.ClientCAFile == "" && len(o.RequestHeader.AllowedNames) > 0 {
		errs = append(errs, errors.New("--requestheader-allowed-names requires --requestheader-client-ca-file"))
	}
	if o.RequestHeader.ClientCAFile != "" && len(o.RequestHeader.UsernameHeaders) == 0 {
		errs = append(errs, errors.New("--requestheader-client-ca-file requires at least one --requestheader-username-headers"))
	}

	sa := o.ServiceAccounts
	if len(sa.Issuers) == 0 {
		errs = append(errs, errors.New("--service-account-issuer must name at least one issuer"))
	}
	for _, iss := range sa.Issuers {
		switch iss {
		case "":
			errs = append(errs, errors.New("--service-account-issuer must not be empty"))
		case serviceaccount.LegacyIssuer:
			errs = append(errs, fmt.Errorf("--service-account-issuer must not be %q, the issuer of legacy tokens", iss))
		}
	}
	for _, aud := range sa.APIAudiences {
		if aud == "" {
			errs = append(errs, errors.New("--api-audiences must not contain empty audiences"))
		}
	}
	if d := sa.MaxTokenExpiration; d < 0 || (d > 0 && d < serviceaccount.MinExpiration) {
		errs = append(errs, fmt.Errorf("--service-account-max-token-expiration %s must be 0 or at least %s", d, serviceaccount.MinExpiration))
	}
	return errs
}
