// Package options holds the flags of tessera-front-proxy and turns them into
// a completed, validated set of options.
package options

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/tessera-dev/tessera/frontproxy/proxy"
	"github.com/tessera-dev/tessera/frontproxy/resolve"
	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
)

// Options are the flags of tessera-front-proxy.
type Options struct {
	// RootDirectory holds the generated serving certificate when none is
	// given.
	RootDirectory string
	SecureServing *genericoptions.SecureServingOptions

	// ClientCAFile verifies client certificates.
	ClientCAFile string
	// DropGroups and PassOnGroups filter the groups passed on to shards.
	DropGroups   []string
	PassOnGroups []string

	// RootKubeconfig is an admin kubeconfig of the root shard: Shard
	// objects and workspaces of root are read with it.
	RootKubeconfig string
	// RootKubeconfigContext selects a context of RootKubeconfig; its
	// current context when empty.
	RootKubeconfigContext string
	// ShardsKubeconfig holds the credentials (and CA) used to read
	// workspaces on every shard, whose address replaces the server;
	// RootKubeconfig's when empty.
	ShardsKubeconfig string
	// ShardsKubeconfigContext selects a context of ShardsKubeconfig.
	ShardsKubeconfigContext string

	// ShardClientCertFile and ShardClientKeyFile are the client
	// certificate the proxy presents to shards with the user in
	// request headers; ShardCAFile verifies the shards.
	ShardClientCertFile string
	ShardClientKeyFile  string
	ShardCAFile         string

	// MappingFile routes /services/ prefixes to backends, in the format
	// of kcp's --mapping-file.
	MappingFile string

	// CacheSize and CacheTTL bound the resolution cache.
	CacheSize int
	CacheTTL  time.Duration
	// HomeCacheSize and HomeCacheTTL bound the cache of users' home
	// workspace paths.
	HomeCacheSize int
	HomeCacheTTL  time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	serving := genericoptions.NewSecureServingOptions()
	serving.BindAddress = net.ParseIP("127.0.0.1")
	serving.BindPort = 8443
	serving.ServerCert.PairName = "front-proxy"
	// Generated certificates go to <root-directory>/certs.
	serving.ServerCert.CertDirectory = ""
	return &Options{
		RootDirectory: ".tessera-front-proxy",
		SecureServing: serving,
		DropGroups:    append([]string(nil), proxy.DefaultDropGroups...),
		CacheSize:     resolve.DefaultCacheSize,
		CacheTTL:      resolve.DefaultTTL,
		HomeCacheSize: proxy.DefaultHomeCacheSize,
		HomeCacheTTL:  proxy.DefaultHomeCacheTTL,
	}
}

// AddFlags registers the flags in named sets.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	o.SecureServing.AddFlags(fss.FlagSet("secure serving"))

	fs := fss.FlagSet("authentication")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that verifies client certificates; the certificate's common name is the user name, its organizations the groups.")
	fs.StringSliceVar(&o.DropGroups, "authentication-drop-groups", o.DropGroups, "Groups that are not passed on to the shards. \"prefix*\" matches all beginning with the prefix. Dropping wins over passing on.")
	fs.StringSliceVar(&o.PassOnGroups, "authentication-pass-on-groups", o.PassOnGroups, "Groups that are passed on to the shards; empty passes on all. \"prefix*\" matches all beginning with the prefix.")

	fs = fss.FlagSet("shards")
	fs.StringVar(&o.RootDirectory, "root-directory", o.RootDirectory, "Directory for generated files: the self-signed serving certificate when --tls-cert-file is not given.")
	fs.StringVar(&o.RootKubeconfig, "root-kubeconfig", o.RootKubeconfig, "Admin kubeconfig of the root shard, used to read Shard objects and to resolve workspace paths (required).")
	fs.StringVar(&o.RootKubeconfigContext, "root-kubeconfig-context", o.RootKubeconfigContext, "Context of --root-kubeconfig to use (default: its current context). Its user must be a shard admin (system:masters), who alone may watch Workspaces across logical clusters; for `tessera start`, the shard-base context of .tessera/admin.kubeconfig.")
	fs.StringVar(&o.ShardsKubeconfig, "shards-kubeconfig", o.ShardsKubeconfig, "Kubeconfig with the credentials and CA used to read workspaces on every shard; its server is replaced by each shard's base URL (default: --root-kubeconfig's).")
	fs.StringVar(&o.ShardsKubeconfigContext, "shards-kubeconfig-context", o.ShardsKubeconfigContext, "Context of --shards-kubeconfig to use (default: its current context).")
	fs.StringVar(&o.ShardClientCertFile, "shard-client-cert-file", o.ShardClientCertFile, "Client certificate the proxy presents to shards when it passes the user on in X-Remote-* headers; its common name must be in the shards' --requestheader-allowed-names (required).")
	fs.StringVar(&o.ShardClientKeyFile, "shard-client-key-file", o.ShardClientKeyFile, "Key of --shard-client-cert-file (required).")
	fs.StringVar(&o.ShardCAFile, "shard-ca-file", o.ShardCAFile, "CA bundle that verifies the shards' serving certificates (required).")
	fs.StringVar(&o.MappingFile, "mapping-file", o.MappingFile, "YAML list of path mappings in the format of kcp's front-proxy (path, backend, backend_server_ca, proxy_client_cert, proxy_client_key, user_header, group_header, extra_header_prefix); entries for /services/ prefixes route virtual workspaces. Without it /services/ goes to the root shard.")
	fs.IntVar(&o.CacheSize, "resolution-cache-size", o.CacheSize, "Number of workspace hops and logical cluster locations kept in the resolution cache.")
	fs.DurationVar(&o.CacheTTL, "resolution-cache-ttl", o.CacheTTL, "Longest time a resolution is used without being read again; changes seen by the shards' Workspace watches evict entries at once.")
	fs.IntVar(&o.HomeCacheSize, "home-workspace-cache-size", o.HomeCacheSize, "Number of users whose home workspace path (what ~ stands for, as the root shard answers) is kept.")
	fs.DurationVar(&o.HomeCacheTTL, "home-workspace-cache-ttl", o.HomeCacheTTL, "Longest time a user's home workspace path is used without asking the root shard again.")
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

// Complete fills in derived defaults: a self-signed serving certificate in
// the root directory when none is given.
func (o *Options) Complete() (CompletedOptions, error) {
	root, err := filepath.Abs(o.RootDirectory)
	if err != nil {
		return CompletedOptions{}, err
	}
	c := *o
	serving := *o.SecureServing
	c.SecureServing = &serving
	c.RootDirectory = root
	if c.SecureServing.ServerCert.CertDirectory == "" {
		c.SecureServing.ServerCert.CertDirectory = filepath.Join(root, "certs")
	}
	if err := c.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return CompletedOptions{}, fmt.Errorf("creating a self-signed serving certificate: %w", err)
	}
	return CompletedOptions{&completedOptions{&c}}, nil
}

// Validate reports every problem with the options.
func (o CompletedOptions) Validate() []error {
	errs := o.SecureServing.Validate()
	required := []struct{ flag, value string }{
		{"--root-kubeconfig", o.RootKubeconfig},
		{"--shard-client-cert-file", o.ShardClientCertFile},
		{"--shard-client-key-file", o.ShardClientKeyFile},
		{"--shard-ca-file", o.ShardCAFile},
	}
	for _, r := range required {
		if r.value == "" {
			errs = append(errs, fmt.Errorf("%s is required", r.flag))
		}
	}
	for flag, file := range map[string]string{
		"--root-kubeconfig": o.RootKubeconfig, "--shards-kubeconfig": o.ShardsKubeconfig, "--client-ca-file": o.ClientCAFile,
		"--shard-client-cert-file": o.ShardClientCertFile, "--shard-client-key-file": o.ShardClientKeyFile,
		"--shard-ca-file": o.ShardCAFile, "--mapping-file": o.MappingFile,
	} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	if o.CacheSize < 1 {
		errs = append(errs, fmt.Errorf("--resolution-cache-size %d must be at least 1", o.CacheSize))
	}
	if o.CacheTTL <= 0 {
		errs = append(errs, fmt.Errorf("--resolution-cache-ttl %v must be positive", o.CacheTTL))
	}
	if o.HomeCacheSize < 1 {
		errs = append(errs, fmt.Errorf("--home-workspace-cache-size %d must be at least 1", o.HomeCacheSize))
	}
	if o.HomeCacheTTL <= 0 {
		errs = append(errs, fmt.Errorf("--home-workspace-cache-ttl %v must be positive", o.HomeCacheTTL))
	}
	return errs
}
