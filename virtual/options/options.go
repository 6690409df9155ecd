// Package options holds the flags of tessera-virtual-workspaces and turns
// them into a completed, validated set of options.
package options

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
)

// DefaultSecurePort is the default HTTPS port. kcp's virtual workspaces
// default to 6444, which tessera-cache-server already uses next to a
// shard on 6443; the next one is free.
const DefaultSecurePort = 6445

// Options are the flags of tessera-virtual-workspaces.
type Options struct {
	// RootDirectory holds the generated CA and serving certificate when
	// no serving certificate is given.
	RootDirectory string

	// Kubeconfig is an admin kubeconfig (system:masters) of the one
	// shard whose virtual workspaces this process serves; Context selects
	// one of its contexts (its current one when empty). A trailing
	// /clusters/<name> of its server is ignored: the process reads the
	// shard's wildcard endpoint and its logical clusters.
	Kubeconfig string
	Context    string
	// ShardName names the shard, for logs and the user agent, and tells
	// its own replicas in the cache apart.
	ShardName string
	// RootAtOrdinalZero names the shard root when --shard-name is the
	// first pod of a StatefulSet of all shards.
	RootAtOrdinalZero bool
	// CacheKubeconfig, if set, reaches the installation's cache server
	// (system:masters): exports and schemas of other shards are read
	// there, for the consumers on this shard of exports elsewhere.
	CacheKubeconfig string

	BindAddress string
	// SecurePort is where HTTPS is served; 0 picks a free port.
	SecurePort int
	// ExternalHostname is the host name clients use and the generated
	// serving certificate is for; the bind address by default.
	ExternalHostname string
	// TLSCertFile and TLSPrivateKeyFile are the serving certificate;
	// empty means one generated under the root directory, signed by the
	// root directory's CA.
	TLSCertFile       string
	TLSPrivateKeyFile string

	// ClientCAFile verifies client certificates; the certificate's CN is
	// the user, its O the groups. Empty: no client certificates.
	ClientCAFile string
	// RequestHeader believes the user a front-proxy names in request
	// headers, when the front-proxy's client certificate is verified by
	// its CA (and its name allowed). Off while RequestHeader.ClientCAFile
	// is empty.
	RequestHeader genericoptions.RequestHeaderAuthenticationOptions
	// TokenReview sends bearer tokens to the shard in TokenReviews;
	// results are kept for TokenCacheTTL.
	TokenReview   bool
	TokenCacheTTL time.Duration
	// AuthenticationKubeconfig, if set, is where TokenReviews go (its
	// current context, as kcp's flag); the shard's base URL with
	// Kubeconfig's credentials otherwise.
	AuthenticationKubeconfig string

	// AuthorizationAllowTTL and AuthorizationDenyTTL keep the shard's
	// SubjectAccessReview answers, at most AuthorizationCacheSize of them.
	AuthorizationAllowTTL  time.Duration
	AuthorizationDenyTTL   time.Duration
	AuthorizationCacheSize int
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		RootDirectory: ".tessera-virtual-workspaces",
		ShardName:     "root",
		BindAddress:   "127.0.0.1",
		SecurePort:    DefaultSecurePort,
		RequestHeader: genericoptions.RequestHeaderAuthenticationOptions{
			UsernameHeaders:     []string{"X-Remote-User"},
			GroupHeaders:        []string{"X-Remote-Group"},
			ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
		},
		TokenReview:            true,
		TokenCacheTTL:          10 * time.Second,
		AuthorizationAllowTTL:  10 * time.Second,
		AuthorizationDenyTTL:   10 * time.Second,
		AuthorizationCacheSize: 10000,
	}
}

// AddFlags registers the flags in named sets.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("shard")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Admin kubeconfig (system:masters, e.g. the shard-base context of a shard's admin.kubeconfig) of the one shard whose virtual workspaces are served (required). Only this shard is read, over its wildcard endpoint /clusters/*.")
	fs.StringVar(&o.Context, "context", o.Context, "Context of --kubeconfig to use (default: its current context).")
	fs.StringVar(&o.ShardName, "shard-name", o.ShardName, "Name of the shard: for logs, and to tell its own replicas in the cache apart.")
	fs.BoolVar(&o.RootAtOrdinalZero, servercmd.RootAtOrdinalZeroFlag, o.RootAtOrdinalZero, servercmd.RootAtOrdinalZeroUsage)
	fs.StringVar(&o.CacheKubeconfig, "cache-kubeconfig", o.CacheKubeconfig, "Kubeconfig of the installation's cache server (system:masters; or of a root shard, which embeds one). With it, consumers on this shard of APIExports on other shards are served, and access to those exports is asked of their shards. Without it, only this shard's exports are served.")
	fs.StringVar(&o.RootDirectory, "root-directory", o.RootDirectory, "Directory for generated certificates: a CA and a serving certificate signed by it, when --tls-cert-file is not given.")

	fs = fss.FlagSet("secure serving")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve HTTPS on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "Port to serve HTTPS on (0: a free port). kcp's default 6444 is tessera-cache-server's.")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname, "Host name clients use to reach the virtual workspaces (default: the bind address).")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate (PEM, with intermediates). Default: one generated under the root directory.")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "Private key of --tls-cert-file.")

	fs = fss.FlagSet("authentication")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that verifies client certificates; the certificate's common name is the user name, its organizations the groups (e.g. the shard's CA, so that the certificates of its admin.kubeconfig work). Without it, users come with bearer tokens or through a front-proxy.")
	o.RequestHeader.AddFlags(fs)
	fs.BoolVar(&o.TokenReview, "authentication-token-review", o.TokenReview, "Authenticate bearer tokens by TokenReviews sent to the shard.")
	fs.DurationVar(&o.TokenCacheTTL, "authentication-token-webhook-cache-ttl", o.TokenCacheTTL, "How long the shard's TokenReview answers are kept.")
	fs.StringVar(&o.AuthenticationKubeconfig, "authentication-kubeconfig", o.AuthenticationKubeconfig, "Kubeconfig (its current context) of the server that reviews bearer tokens, e.g. a shard's admin.kubeconfig, whose root context reviews them in root (default: --kubeconfig, at the shard's base URL, in its system:admin logical cluster).")

	fs = fss.FlagSet("authorization")
	fs.DurationVar(&o.AuthorizationAllowTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizationAllowTTL, "How long an allowing SubjectAccessReview answer of the shard is kept.")
	fs.DurationVar(&o.AuthorizationDenyTTL, "authorization-webhook-cache-unauthorized-ttl", o.AuthorizationDenyTTL, "How long a denying SubjectAccessReview answer of the shard is kept.")
	fs.IntVar(&o.AuthorizationCacheSize, "authorization-cache-size", o.AuthorizationCacheSize, "Number of SubjectAccessReview answers kept, for all logical clusters together.")
}

// AddFlagsTo adds every flag set to fs (for tests and embedding).
func (o *Options) AddFlagsTo(fs *pflag.FlagSet) {
	servercmd.AddFlagsTo(fs, o.AddFlags)
}

type completedOptions struct {
	*Options
}

// CompletedOptions can only be made by Complete.
type CompletedOptions struct {
	*completedOptions
}

// Complete fills in derived defaults.
func (o *Options) Complete() (CompletedOptions, error) {
	root, err := filepath.Abs(o.RootDirectory)
	if err != nil {
		return CompletedOptions{}, err
	}
	c := *o
	c.RootDirectory = root
	if c.RootAtOrdinalZero && servercmd.AtOrdinalZero(c.ShardName) {
		c.ShardName = "root"
	}
	c.ExternalHostname = servercmd.ExternalHostname(c.ExternalHostname, c.BindAddress)
	return CompletedOptions{&completedOptions{&c}}, nil
}

// Validate reports every problem with the options.
func (o CompletedOptions) Validate() []error {
	var errs []error
	if o.Kubeconfig == "" {
		errs = append(errs, errors.New("--kubeconfig is required"))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d is out of range", o.SecurePort))
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	errs = append(errs, o.RequestHeader.Validate()...)
	if o.RequestHeader.ClientCAFile == "" && len(o.RequestHeader.AllowedNames) > 0 {
		errs = append(errs, errors.New("--requestheader-allowed-names requires --requestheader-client-ca-file"))
	}
	if o.RequestHeader.ClientCAFile != "" && len(o.RequestHeader.UsernameHeaders) == 0 {
		errs = append(errs, errors.New("--requestheader-client-ca-file requires at least one --requestheader-username-headers"))
	}
	for flag, file := range map[string]string{
		"--kubeconfig": o.Kubeconfig, "--authentication-kubeconfig": o.AuthenticationKubeconfig, "--client-ca-file": o.ClientCAFile, "--requestheader-client-ca-file": o.RequestHeader.ClientCAFile,
		"--tls-cert-file": o.TLSCertFile, "--tls-private-key-file": o.TLSPrivateKeyFile,
	} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	if o.TokenCacheTTL < 0 {
		errs = append(errs, fmt.Errorf("--authentication-token-webhook-cache-ttl %v must not be negative", o.TokenCacheTTL))
	}
	if o.AuthorizationAllowTTL < 0 || o.AuthorizationDenyTTL < 0 {
		errs = append(errs, errors.New("--authorization-webhook-cache-authorized-ttl and --authorization-webhook-cache-unauthorized-ttl must not be negative"))
	}
	if o.AuthorizationCacheSize < 1 {
		errs = append(errs, fmt.Errorf("--authorization-cache-size %d must be at least 1", o.AuthorizationCacheSize))
	}
	return errs
}
