// Package options holds the flags of `tessera start` and turns them into a
// completed, validated set of options.
package options

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/tessera-dev/tessera/shard/authentication"
)

// Options are the flags of `tessera start`.
type Options struct {
	RootDirectory string
	BindAddress   string
	SecurePort    int
	// ExternalHostname is the host name written into the kubeconfig and the
	// serving certificate; the bind address by default.
	ExternalHostname string

	// EtcdServers selects an external etcd; empty means embedded.
	EtcdServers  []string
	EtcdCAFile   string
	EtcdCertFile string
	EtcdKeyFile  string

	EmbeddedEtcdClientPort int
	EmbeddedEtcdPeerPort   int
	// EmbeddedEtcdUnsafeNoFsync is for tests and benchmarks.
	EmbeddedEtcdUnsafeNoFsync bool
	EmbeddedEtcdLogLevel      string

	// Authentication holds the authentication flags: client CA, static
	// tokens, request-header and service account tokens.
	Authentication *authentication.Options

	// WatchCache enables one upstream watch cache per built-in resource.
	WatchCache bool

	ShardName string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		RootDirectory:          ".tessera",
		BindAddress:            "127.0.0.1",
		SecurePort:             6443,
		EmbeddedEtcdClientPort: 2379,
		EmbeddedEtcdPeerPort:   2380,
		EmbeddedEtcdLogLevel:   "error",
		WatchCache:             true,
		ShardName:              "root",
		Authentication:         authentication.NewOptions(),
	}
}

// AddFlags registers the flags in named sets.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("shard")
	fs.StringVar(&o.RootDirectory, "root-directory", o.RootDirectory, "Directory for the shard's data: certificates, kubeconfig and embedded etcd.")
	fs.StringVar(&o.ShardName, "shard-name", o.ShardName, "Name of this shard.")

	fs = fss.FlagSet("secure serving")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve HTTPS on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "Port to serve HTTPS on.")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname, "Host name clients use to reach the shard (default: the bind address).")

	fs = fss.FlagSet("etcd")
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "External etcd servers to use instead of the embedded etcd (scheme://ip:port, comma separated).")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "CA bundle to verify the external etcd servers.")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "Client certificate for the external etcd servers.")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "Client key for the external etcd servers.")
	fs.IntVar(&o.EmbeddedEtcdClientPort, "embedded-etcd-client-port", o.EmbeddedEtcdClientPort, "Loopback port of the embedded etcd's client endpoint.")
	fs.IntVar(&o.EmbeddedEtcdPeerPort, "embedded-etcd-peer-port", o.EmbeddedEtcdPeerPort, "Loopback port of the embedded etcd's peer endpoint.")
	fs.BoolVar(&o.EmbeddedEtcdUnsafeNoFsync, "embedded-etcd-unsafe-no-fsync", o.EmbeddedEtcdUnsafeNoFsync, "Disable fsync in the embedded etcd. Loses data on a crash; for tests only.")
	fs.StringVar(&o.EmbeddedEtcdLogLevel, "embedded-etcd-log-level", o.EmbeddedEtcdLogLevel, "Log level of the embedded etcd: debug, info, warn, error, panic or fatal.")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "Serve lists and watches of built-in resources from one watch cache per resource.")

	o.Authentication.AddFlags(fss.FlagSet("authentication"))
}

// AddFlagsTo adds every flag set to fs (for tests and embedding).
func (o *Options) AddFlagsTo(fs *pflag.FlagSet) {
	var fss cliflag.NamedFlagSets
	o.AddFlags(&fss)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
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
	if c.ExternalHostname == "" {
		c.ExternalHostname = c.BindAddress
		if ip := net.ParseIP(c.BindAddress); ip != nil && ip.IsUnspecified() {
			c.ExternalHostname = "127.0.0.1"
		}
	}
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
	if len(o.EtcdServers) == 0 {
		for name, p := range map[string]int{"--embedded-etcd-client-port": o.EmbeddedEtcdClientPort, "--embedded-etcd-peer-port": o.EmbeddedEtcdPeerPort} {
			if p <= 0 || p > 65535 {
				errs = append(errs, fmt.Errorf("%s %d is out of range", name, p))
			}
		}
	}
	if (o.EtcdCertFile == "") != (o.EtcdKeyFile == "") {
		errs = append(errs, fmt.Errorf("--etcd-certfile and --etcd-keyfile go together"))
	}
	if o.ShardName == "" {
		errs = append(errs, fmt.Errorf("--shard-name must not be empty"))
	}
	errs = append(errs, o.Authentication.Validate()...)
	return errs
}
