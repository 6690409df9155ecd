// Package options holds the flags of tessera-cache-server and turns them
// into a completed, validated set of options.
package options

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
)

// Options are the flags of the cache server.
type Options struct {
	// RootDirectory holds the generated certificates, the admin
	// kubeconfig and the embedded etcd's data.
	RootDirectory string
	BindAddress   string
	// SecurePort is where HTTPS is served; 0 picks a free port.
	SecurePort int
	// ExternalHostname is the host name written into the kubeconfig and
	// the generated serving certificate; the bind address by default.
	ExternalHostname string

	// TLSCertFile and TLSPrivateKeyFile are the serving certificate; empty
	// means one generated under the root directory, signed by the root
	// directory's CA.
	TLSCertFile       string
	TLSPrivateKeyFile string
	// ClientCAFile verifies client certificates; empty means the root
	// directory's CA, which also signs an admin client certificate
	// (group system:masters) and the admin kubeconfig.
	ClientCAFile string

	// EtcdServers selects an external etcd; empty means embedded. Keys
	// are under /cache, so the etcd may be shared with a shard.
	EtcdServers  []string
	EtcdCAFile   string
	EtcdCertFile string
	EtcdKeyFile  string

	EmbeddedEtcdClientPort int
	EmbeddedEtcdPeerPort   int
	// EmbeddedEtcdUnsafeNoFsync is for tests and benchmarks.
	EmbeddedEtcdUnsafeNoFsync bool
	EmbeddedEtcdLogLevel      string

	// WatchCache serves lists and watches from one watch cache per
	// replicated resource, for all shards and clusters.
	WatchCache bool
}

// NewOptions returns the defaults. The ports are next to a shard's
// defaults (6443, etcd 2379 and 2380), so both run on one machine.
func NewOptions() *Options {
	return &Options{
		RootDirectory:          ".tessera-cache",
		BindAddress:            "127.0.0.1",
		SecurePort:             6444,
		EmbeddedEtcdClientPort: 2381,
		EmbeddedEtcdPeerPort:   2382,
		EmbeddedEtcdLogLevel:   "error",
		WatchCache:             true,
	}
}

// AddFlags registers the flags in named sets.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("cache server")
	fs.StringVar(&o.RootDirectory, "root-directory", o.RootDirectory, "Directory for the cache server's data: generated certificates, cache.kubeconfig and the embedded etcd.")

	fs = fss.FlagSet("secure serving")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve HTTPS on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "Port to serve HTTPS on (0: a free port).")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname, "Host name clients use to reach the cache server (default: the bind address).")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate (PEM, with intermediates). Default: one generated under the root directory.")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "Private key of --tls-cert-file.")

	fs = fss.FlagSet("authentication")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that verifies client certificates; the certificate's CN is the user name and its O the groups. Only members of system:masters are allowed in. Default: a CA generated under the root directory, with an admin client certificate and cache.kubeconfig.")

	fs = fss.FlagSet("etcd")
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "External etcd servers to use instead of the embedded etcd (scheme://ip:port, comma separated). Keys are under /cache.")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "CA bundle to verify the external etcd servers.")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "Client certificate for the external etcd servers.")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "Client key for the external etcd servers.")
	fs.IntVar(&o.EmbeddedEtcdClientPort, "embedded-etcd-client-port", o.EmbeddedEtcdClientPort, "Loopback port of the embedded etcd's client endpoint.")
	fs.IntVar(&o.EmbeddedEtcdPeerPort, "embedded-etcd-peer-port", o.EmbeddedEtcdPeerPort, "Loopback port of the embedded etcd's peer endpoint.")
	fs.BoolVar(&o.EmbeddedEtcdUnsafeNoFsync, "embedded-etcd-unsafe-no-fsync", o.EmbeddedEtcdUnsafeNoFsync, "Disable fsync in the embedded etcd. Loses data on a crash; for tests only.")
	fs.StringVar(&o.EmbeddedEtcdLogLevel, "embedded-etcd-log-level", o.EmbeddedEtcdLogLevel, "Log level of the embedded etcd: debug, info, warn, error, panic or fatal.")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "Serve lists and watches from one watch cache per replicated resource, shared by all shards and logical clusters (with periodic watch bookmarks).")
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
	c.ExternalHostname = servercmd.ExternalHostname(c.ExternalHostname, c.BindAddress)
	return CompletedOptions{&completedOptions{&c}}, nil
}

// Validate reports every problem with the options.
func (o CompletedOptions) Validate() []error {
	var errs []error
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d is out of range", o.SecurePort))
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, fmt.Errorf("--tls-cert-file and --tls-private-key-file go together"))
	}
	if len(o.EtcdServers) == 0 {
		for _, p := range []struct {
			name string
			port int
		}{{"--embedded-etcd-client-port", o.EmbeddedEtcdClientPort}, {"--embedded-etcd-peer-port", o.EmbeddedEtcdPeerPort}} {
			if p.port <= 0 || p.port > 65535 {
				errs = append(errs, fmt.Errorf("%s %d is out of range", p.name, p.port))
			}
		}
	}
	if (o.EtcdCertFile == "") != (o.EtcdKeyFile == "") {
		errs = append(errs, fmt.Errorf("--etcd-certfile and --etcd-keyfile go together"))
	}
	return errs
}
