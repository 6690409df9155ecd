package authentication

import (
	"crypto"
	"fmt"
	"os"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"

	"github.com/tessera-dev/tessera/shard/authentication/serviceaccount"
)

// Files are the shard's own files authentication relies on.
type Files struct {
	// CertsDir holds the service account signing key (sa.key), created on
	// first start, unless --service-account-signing-key-file names another.
	CertsDir string
	// CAFile is the shard's generated CA: the client CA unless
	// --client-ca-file names another, and the ca.crt of legacy service
	// account token Secrets.
	CAFile string
}

// Config is the authentication of a shard as far as it does not depend on
// the running server: CAs, static tokens, the signing key. It is made
// while the server is configured; New completes it once the shard's
// informers exist.
type Config struct {
	clientCA      dynamiccertificates.CAContentProvider
	requestHeader *authenticatorfactory.RequestHeaderConfig
	staticTokens  authenticator.Token
	issuer        *serviceaccount.Issuer
	publicKeys    []crypto.PublicKey
	issuers       []string
	apiAudiences  authenticator.Audiences
	maxExpiration time.Duration
	rootCA        []byte
}

// NewConfig reads the files the options and files name, creating the
// service account signing key on first start. o must have passed Validate.
func NewConfig(o *Options, files Files) (*Config, error) {
	c := &Config{maxExpiration: o.ServiceAccounts.MaxTokenExpiration}

	rootCA, err := os.ReadFile(files.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the shard CA: %w", err)
	}
	c.rootCA = rootCA
	clientCAFile := o.ClientCAFile
	if clientCAFile == "" {
		clientCAFile = files.CAFile
	}
	if c.clientCA, err = dynamiccertificates.NewDynamicCAContentFromFile("client-ca", clientCAFile); err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	if c.requestHeader, err = o.RequestHeader.ToAuthenticationRequestHeaderConfig(); err != nil {
		return nil, fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	if o.TokenAuthFile != "" {
		csv, err := tokenfile.NewCSV(o.TokenAuthFile)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		c.staticTokens = csv
	}

	if err := c.serviceAccounts(o.ServiceAccounts, files.CertsDir); err != nil {
		return nil, err
	}
	return c, nil
}

// serviceAccounts loads the keys and sets the issuers and audiences.
func (c *Config) serviceAccounts(o ServiceAccountOptions, certsDir string) error {
	var signingKey func() (crypto.Signer, error)
	if o.SigningKeyFile != "" {
		key, err := serviceaccount.LoadSigningKey(o.SigningKeyFile)
		if err != nil {
			return err
		}
		signingKey = func() (crypto.Signer, error) { return key, nil }
	} else {
		// A new key is made while the rest of the shard starts;
		// WaitForSigningKey is the server's last word on it.
		signingKey = serviceaccount.EnsureSigningKeyAsync(certsDir)
	}
	extra, err := serviceaccount.LoadPublicKeys(o.KeyFiles...)
	if err != nil {
		return err
	}
	c.publicKeys = extra
	if len(o.Issuers) == 0 {
		return fmt.Errorf("no service account token issuer")
	}
	c.issuers = append([]string(nil), o.Issuers...)
	if c.issuer, err = serviceaccount.NewPendingIssuer(signingKey, c.issuers[0], nil); err != nil {
		return err
	}
	c.apiAudiences = authenticator.Audiences(o.APIAudiences)
	if len(c.apiAudiences) == 0 {
		c.apiAudiences = authenticator.Audiences(c.issuers)
	}
	return nil
}

// WaitForSigningKey waits until the service account signing key is there
// and returns the error of reading or making it, if any. The shard runs it
// as a post-start hook, so that it is ready only with a key, and stops on
// an error.
func (c *Config) WaitForSigningKey() error {
	_, err := c.issuer.PublicKey()
	return err
}

// ClientCA returns the CAs to offer in the TLS handshake: the client CA
// and, when request-header authentication is on, the request-header CA.
// Pass it to AuthenticationInfo.ApplyClientCert; the serving code keeps it
// up to date when the files change.
func (c *Config) ClientCA() dynamiccertificates.CAContentProvider {
	if c.requestHeader == nil {
		return c.clientCA
	}
	return dynamiccertificates.NewUnionCAContentProvider(c.clientCA, c.requestHeader.CAContentProvider)
}

// RequestHeaderConfig returns the request-header configuration, nil when
// it is off. The generic API server strips its headers from authenticated
// requests (AuthenticationInfo.RequestHeaderConfig).
func (c *Config) RequestHeaderConfig() *authenticatorfactory.RequestHeaderConfig {
	return c.requestHeader
}

// APIAudiences returns the audiences of the shard's API
// (AuthenticationInfo.APIAudiences).
func (c *Config) APIAudiences() authenticator.Audiences {
	return append(authenticator.Audiences(nil), c.apiAudiences...)
}

// Issuer returns the issuer of the shard's service account tokens, for the
// legacy token controller.
func (c *Config) Issuer() *serviceaccount.Issuer { return c.issuer }

// RootCA returns the PEM CA bundle written into legacy token Secrets as
// ca.crt: the CA that signed the shard's serving certificate.
func (c *Config) RootCA() []byte { return append([]byte(nil), c.rootCA...) }
