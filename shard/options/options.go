// Package options holds the flags of `tessera start` and turns them into a
// completed, validated set of options.
package options

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
	"github.com/tessera-dev/tessera/shard/admission/objectlimit"
	"github.com/tessera-dev/tessera/shard/admission/webhooks"
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
	// EtcdPrefix is the prefix of every key the shard writes, so that
	// several shards can share one etcd.
	EtcdPrefix string

	// EncryptionProviderConfig is the path of a Kubernetes
	// EncryptionConfiguration: how values are encrypted in etcd, per
	// resource.
	EncryptionProviderConfig string

	EmbeddedEtcdClientPort int
	EmbeddedEtcdPeerPort   int
	// EmbeddedEtcdUnsafeNoFsync is for tests and benchmarks.
	EmbeddedEtcdUnsafeNoFsync bool
	EmbeddedEtcdLogLevel      string

	// Authentication holds the authentication flags: client CA, static
	// tokens, request-header and service account tokens.
	Authentication *authentication.Options

	// Audit holds k8s.io/apiserver's audit flags: policy file, log and
	// webhook backends.
	Audit *genericoptions.AuditOptions

	// WatchCache enables one upstream watch cache per built-in resource.
	WatchCache bool
	// WatchCacheListSnapshots keeps upstream's snapshots of the watch
	// caches (feature ListFromCacheSnapshot) for paginated lists.
	WatchCacheListSnapshots bool
	// Profiling serves /debug/pprof (to shard admins only);
	// ContentionProfiling adds block and mutex profiles.
	Profiling           bool
	ContentionProfiling bool

	// AdmissionWebhookClusters bounds the logical clusters whose webhook
	// admission plugins are kept built (webhooks.DefaultMaxClusters).
	AdmissionWebhookClusters int

	// EnablePriorityAndFairness shares the shard between tenants with API
	// Priority and Fairness (package fairness); otherwise max-in-flight
	// limits apply to everyone together.
	EnablePriorityAndFairness bool
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the
	// requests served at once; with APF, their sum is its concurrency.
	// Zero means 50 and 25 per CPU (GOMAXPROCS): kube-apiserver's 400 and
	// 200 on 8 CPUs, and few enough concurrent lists on small machines
	// that a tenant's lists cannot take the CPU from the others.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int

	// LogicalClusterObjectLimit is the default limit of objects per
	// logical cluster (objectlimit); zero or less disables it.
	LogicalClusterObjectLimit int64
	// SyncTargetHeartbeatThreshold is how old a syncer's heartbeat may be
	// before its SyncTarget is not Ready (kcp's flag).
	SyncTargetHeartbeatThreshold time.Duration
	// BatteriesIncluded are the optional parts the root shard sets up
	// (kcp's flag): BatteryRootComputeWorkspace.
	BatteriesIncluded []string
	// LogicalClusterObjectScanInterval is how often objects are counted.
	LogicalClusterObjectScanInterval time.Duration
	// OrphanLogicalClusterSweepInterval is how often every logical
	// cluster owned by a Workspace is checked for a missing owner.
	OrphanLogicalClusterSweepInterval time.Duration

	ShardName string
	// CacheKubeconfig is a kubeconfig of an external cache server (its
	// base URL, system:masters credentials). Empty: the shard serves a
	// cache server itself under /services/cache, in its own etcd.
	CacheKubeconfig string
	// ShardBaseURL is the address other shards and front-proxies use to
	// reach this shard (Shard spec.baseURL); https://<external
	// hostname>:<secure port> by default.
	ShardBaseURL string
	// ShardExternalURL is the address users reach the shard's workspaces
	// under (Shard spec.externalURL); the base URL by default.
	ShardExternalURL string
	// ShardVirtualWorkspaceURL is the address of the shard's virtual
	// workspaces (Shard spec.virtualWorkspaceURL); the base URL by default.
	ShardVirtualWorkspaceURL string
	// RunVirtualWorkspaces serves the virtual workspaces in the shard
	// process; off when tessera-virtual-workspaces serves them.
	RunVirtualWorkspaces bool

	// RootShardKubeconfigFile makes this a non-root shard: a kubeconfig
	// with admin (system:masters) credentials to the root shard (its
	// shard-base context when it has one, as kcp reads it; else its
	// current context). See package server, join.go.
	RootShardKubeconfigFile string
	// RootAtOrdinalZero makes the first pod of a StatefulSet of all shards
	// the root shard (servercmd.RootAtOrdinalZeroUsage).
	RootAtOrdinalZero bool

	// TLSCertFile and TLSPrivateKeyFile are an existing serving
	// certificate, used as is; otherwise one is generated under
	// <root directory>/certs, signed by the installation CA or the shard's
	// own CA.
	TLSCertFile       string
	TLSPrivateKeyFile string
	// InstallationCACertFile and InstallationCAKeyFile are a CA shared by
	// every process of an installation: the shard signs with it the
	// certificates it lacks (serving, admin, shard client) and trusts
	// client certificates it signed, unless --client-ca-file names other
	// CAs. Without them the shard generates its own CA.
	InstallationCACertFile string
	InstallationCAKeyFile  string
	// ShardClientCertFile and ShardClientKeyFile are the client
	// certificate the shard presents to other shards and the cache server
	// (kcp's flags); generated from the CA when not given.
	ShardClientCertFile string
	ShardClientKeyFile  string

	// Home workspaces: root:users:<bucket>...:<user>, created on first use.
	EnableHomeWorkspaces       bool
	HomeCreatorGroups          []string
	HomeWorkspacesBucketLevels int
	HomeWorkspacesBucketSize   int
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		RootDirectory:                     ".tessera",
		BindAddress:                       "127.0.0.1",
		SecurePort:                        6443,
		EmbeddedEtcdClientPort:            2379,
		EmbeddedEtcdPeerPort:              2380,
		EmbeddedEtcdLogLevel:              "error",
		EtcdPrefix:                        "/registry",
		RunVirtualWorkspaces:              true,
		WatchCache:                        true,
		Profiling:                         true,
		AdmissionWebhookClusters:          webhooks.DefaultMaxClusters,
		LogicalClusterObjectScanInterval:  objectlimit.DefaultScanInterval,
		OrphanLogicalClusterSweepInterval: 5 * time.Minute,
		SyncTargetHeartbeatThreshold:      time.Minute,
		EnablePriorityAndFairness:         true,
		ShardName:                         "root",
		EnableHomeWorkspaces:              true,
		HomeCreatorGroups:                 []string{"system:authenticated"},
		HomeWorkspacesBucketLevels:        2,
		HomeWorkspacesBucketSize:          2,
		Authentication:                    authentication.NewOptions(),
		Audit:                             genericoptions.NewAuditOptions(),
	}
}

// AddFlags registers the flags in named sets.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("shard")
	fs.StringVar(&o.RootDirectory, "root-directory", o.RootDirectory, "Directory for the shard's data: certificates, kubeconfig and embedded etcd.")
	fs.StringVar(&o.ShardName, "shard-name", o.ShardName, "Name of this shard.")
	fs.StringVar(&o.ShardBaseURL, "shard-base-url", o.ShardBaseURL, "Address other shards use to reach this shard (default: https://<external hostname>:<secure port>).")
	fs.StringVar(&o.ShardExternalURL, "shard-external-url", o.ShardExternalURL, "Address in the URLs of workspaces on this shard, usually a front-proxy (default: the base URL).")
	fs.StringVar(&o.ShardVirtualWorkspaceURL, "shard-virtual-workspace-url", o.ShardVirtualWorkspaceURL, "Address of this shard's virtual workspaces (default: the base URL).")
	fs.BoolVar(&o.RunVirtualWorkspaces, "run-virtual-workspaces", o.RunVirtualWorkspaces, "Serve the virtual workspaces (/services/apiexport, /services/initializingworkspaces) in the shard process. Off when tessera-virtual-workspaces serves them; then --shard-virtual-workspace-url must say where.")

	fs.BoolVar(&o.RootAtOrdinalZero, servercmd.RootAtOrdinalZeroFlag, o.RootAtOrdinalZero, servercmd.RootAtOrdinalZeroUsage)
	fs.StringVar(&o.RootShardKubeconfigFile, "root-shard-kubeconfig-file", o.RootShardKubeconfigFile, "Kubeconfig holding admin (system:masters) credentials to the root shard; its shard-base context if present, else its current context. With it, this shard joins that installation: --shard-name must not be root.")
	fs.StringVar(&o.ShardClientCertFile, "shard-client-cert-file", o.ShardClientCertFile, "Client certificate the shard presents to other shards and the cache server (default: generated under <root directory>/certs for user system:shard:<shard name> in group system:masters).")
	fs.StringVar(&o.ShardClientKeyFile, "shard-client-key-file", o.ShardClientKeyFile, "Key of --shard-client-cert-file.")
	fs.StringVar(&o.InstallationCACertFile, "installation-ca-cert-file", o.InstallationCACertFile, "CA of the installation, shared by all shards: signs the certificates the shard generates and verifies client certificates (unless --client-ca-file is set). Default: a CA generated under <root directory>/certs.")
	fs.StringVar(&o.InstallationCAKeyFile, "installation-ca-key-file", o.InstallationCAKeyFile, "Key of --installation-ca-cert-file.")

	fs = fss.FlagSet("workspaces")
	fs.BoolVar(&o.EnableHomeWorkspaces, "enable-home-workspaces", o.EnableHomeWorkspaces, "Create a home workspace root:users:<bucket>:...:<user> for a user on first access through ~.")
	fs.StringSliceVar(&o.HomeCreatorGroups, "home-creator-groups", o.HomeCreatorGroups, "Groups whose members get a home workspace.")
	fs.IntVar(&o.HomeWorkspacesBucketLevels, "home-workspaces-bucket-levels", o.HomeWorkspacesBucketLevels, "Number of bucket workspaces between root:users and a home workspace (1-5).")
	fs.IntVar(&o.HomeWorkspacesBucketSize, "home-workspaces-bucket-size", o.HomeWorkspacesBucketSize, "Number of characters of a bucket name (1-4).")

	fs = fss.FlagSet("secure serving")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve HTTPS on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "Port to serve HTTPS on.")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname, "Host name clients use to reach the shard (default: the bind address).")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate, used as is (default: generated under <root directory>/certs for the external hostname, bind address, 127.0.0.1 and localhost, signed by the installation CA or the shard's own CA).")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "Key of --tls-cert-file.")

	fs = fss.FlagSet("etcd")
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "External etcd servers to use instead of the embedded etcd (scheme://ip:port, comma separated).")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "CA bundle to verify the external etcd servers.")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "Client certificate for the external etcd servers.")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "Client key for the external etcd servers.")
	fs.StringVar(&o.EtcdPrefix, "etcd-prefix", o.EtcdPrefix, "Prefix of the shard's keys in etcd; shards that share an etcd need different prefixes.")
	fs.StringVar(&o.EncryptionProviderConfig, "encryption-provider-config", o.EncryptionProviderConfig, "File with a Kubernetes EncryptionConfiguration (apiserver.config.k8s.io/v1) telling how objects are encrypted in etcd, per resource: built-in ones, and custom resources by <plural>.<group>, *.<group> or *.*.")
	fs.IntVar(&o.EmbeddedEtcdClientPort, "embedded-etcd-client-port", o.EmbeddedEtcdClientPort, "Loopback port of the embedded etcd's client endpoint.")
	fs.IntVar(&o.EmbeddedEtcdPeerPort, "embedded-etcd-peer-port", o.EmbeddedEtcdPeerPort, "Loopback port of the embedded etcd's peer endpoint.")
	fs.BoolVar(&o.EmbeddedEtcdUnsafeNoFsync, "embedded-etcd-unsafe-no-fsync", o.EmbeddedEtcdUnsafeNoFsync, "Disable fsync in the embedded etcd. Loses data on a crash; for tests only.")
	fs.StringVar(&o.EmbeddedEtcdLogLevel, "embedded-etcd-log-level", o.EmbeddedEtcdLogLevel, "Log level of the embedded etcd: debug, info, warn, error, panic or fatal.")
	fs.IntVar(&o.AdmissionWebhookClusters, "admission-webhook-clusters", o.AdmissionWebhookClusters, "Logical clusters with admission webhooks whose webhook plugins are kept built (about 430 KiB each); others are built again (about 4 ms) when next written to.")
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness, "Share the shard between logical clusters and users with API Priority and Fairness, configured in system:admin; otherwise the max-in-flight limits apply to everyone together.")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight, "Maximum non-mutating requests in flight; with API Priority and Fairness, this plus --max-mutating-requests-inflight is the shard's concurrency. 0: 50 per CPU.")
	fs.IntVar(&o.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInFlight, "Maximum mutating requests in flight; see --max-requests-inflight. 0: 25 per CPU.")
	fs.StringSliceVar(&o.BatteriesIncluded, "batteries-included", o.BatteriesIncluded, "Optional parts the root shard sets up, comma separated: "+BatteryRootComputeWorkspace+" (the workspace root:compute with the APIExport kubernetes of Deployments, Services, Ingresses, Pods and Endpoints, as kcp's).")
	fs.DurationVar(&o.SyncTargetHeartbeatThreshold, "sync-target-heartbeat-threshold", o.SyncTargetHeartbeatThreshold, "How long to wait for a syncer's heartbeat before its SyncTarget is not Ready and its workloads move away.")
	fs.Int64Var(&o.LogicalClusterObjectLimit, "logical-cluster-total-object-limit", o.LogicalClusterObjectLimit, "Default limit of objects in a logical cluster, other than root and system clusters; creates beyond it get 403. The core.kcp.io/max-total-objects annotation of a LogicalCluster overrides it. 0 disables it.")
	fs.StringVar(&o.CacheKubeconfig, "cache-kubeconfig", o.CacheKubeconfig, "Kubeconfig of an external cache server (tessera-cache-server's cache.kubeconfig, context \"base\" or a server URL without path). Empty: the root shard embeds the cache server under /services/cache, in its own etcd, and a joining shard uses the root shard's.")
	fs.DurationVar(&o.OrphanLogicalClusterSweepInterval, "orphan-logical-cluster-sweep-interval", o.OrphanLogicalClusterSweepInterval, "How often every logical cluster owned by a Workspace is checked, and deleted if its Workspace is gone (they are also checked when they appear).")
	fs.DurationVar(&o.LogicalClusterObjectScanInterval, "logical-cluster-object-count-scan-interval", o.LogicalClusterObjectScanInterval, "How often the objects of every logical cluster are counted in etcd (keys only) for the object limit.")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "Serve lists and watches from one watch cache per resource (built-in resources) and per group/resource (custom resources), shared by all logical clusters.")
	fs.BoolVar(&o.WatchCacheListSnapshots, "watch-cache-list-snapshots", o.WatchCacheListSnapshots, "Keep a snapshot of each watch cache at every change in its history, so that the later pages of paginated lists are served from the cache (upstream's ListFromCacheSnapshot). Every kept change then holds a copy of the part of the cache's index it changed: with watch caches shared by all logical clusters, about 20 KiB per workspace just created. Off: those pages are read from etcd.")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Serve Go profiles at /debug/pprof, to shard admins only.")
	fs.BoolVar(&o.ContentionProfiling, "contention-profiling", o.ContentionProfiling, "With --profiling, also record block and mutex contention profiles.")

	o.Authentication.AddFlags(fss.FlagSet("authentication"))
	o.Audit.AddFlags(fss.FlagSet("auditing"))
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
// BatteryRootComputeWorkspace is the battery of the workspace root:compute
// and its APIExport kubernetes (see --batteries-included).
const BatteryRootComputeWorkspace = "root-compute-workspace"

func (o *Options) Complete() (CompletedOptions, error) {
	root, err := filepath.Abs(o.RootDirectory)
	if err != nil {
		return CompletedOptions{}, err
	}
	c := *o
	c.RootDirectory = root
	if c.RootAtOrdinalZero && servercmd.AtOrdinalZero(c.ShardName) {
		c.ShardName, c.RootShardKubeconfigFile = RootShardName, ""
	}
	c.ExternalHostname = servercmd.ExternalHostname(c.ExternalHostname, c.BindAddress)
	if c.ShardBaseURL == "" {
		c.ShardBaseURL = "https://" + net.JoinHostPort(c.ExternalHostname, strconv.Itoa(c.SecurePort))
	}
	c.ShardBaseURL = strings.TrimSuffix(c.ShardBaseURL, "/")
	if c.ShardExternalURL == "" {
		c.ShardExternalURL = c.ShardBaseURL
	}
	c.ShardExternalURL = strings.TrimSuffix(c.ShardExternalURL, "/")
	if c.ShardVirtualWorkspaceURL == "" {
		c.ShardVirtualWorkspaceURL = c.ShardBaseURL
	}
	c.ShardVirtualWorkspaceURL = strings.TrimSuffix(c.ShardVirtualWorkspaceURL, "/")
	for _, f := range []*string{&c.RootShardKubeconfigFile, &c.TLSCertFile, &c.TLSPrivateKeyFile, &c.InstallationCACertFile, &c.InstallationCAKeyFile, &c.ShardClientCertFile, &c.ShardClientKeyFile} {
		if *f == "" {
			continue
		}
		if *f, err = filepath.Abs(*f); err != nil {
			return CompletedOptions{}, err
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
	for name, u := range map[string]string{"--shard-base-url": o.ShardBaseURL, "--shard-external-url": o.ShardExternalURL, "--shard-virtual-workspace-url": o.ShardVirtualWorkspaceURL} {
		if parsed, err := url.Parse(u); err != nil || parsed.Scheme != "https" || parsed.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q is not an absolute https URL", name, u))
		}
	}
	for _, b := range o.BatteriesIncluded {
		if b != BatteryRootComputeWorkspace {
			errs = append(errs, fmt.Errorf("--batteries-included: unknown battery %q (known: %s)", b, BatteryRootComputeWorkspace))
		}
	}
	if o.SyncTargetHeartbeatThreshold <= 0 {
		errs = append(errs, fmt.Errorf("--sync-target-heartbeat-threshold %v must be positive", o.SyncTargetHeartbeatThreshold))
	}
	if o.LogicalClusterObjectScanInterval <= 0 {
		errs = append(errs, fmt.Errorf("--logical-cluster-object-count-scan-interval %v must be positive", o.LogicalClusterObjectScanInterval))
	}
	if o.MaxRequestsInFlight < 0 || o.MaxMutatingRequestsInFlight < 0 {
		errs = append(errs, fmt.Errorf("--max-requests-inflight %d and --max-mutating-requests-inflight %d must not be negative", o.MaxRequestsInFlight, o.MaxMutatingRequestsInFlight))
	}
	if o.AdmissionWebhookClusters < 1 {
		errs = append(errs, fmt.Errorf("--admission-webhook-clusters %d must be at least 1", o.AdmissionWebhookClusters))
	}
	if o.HomeWorkspacesBucketLevels < 1 || o.HomeWorkspacesBucketLevels > 5 {
		errs = append(errs, fmt.Errorf("--home-workspaces-bucket-levels %d is out of range 1-5", o.HomeWorkspacesBucketLevels))
	}
	if o.HomeWorkspacesBucketSize < 1 || o.HomeWorkspacesBucketSize > 4 {
		errs = append(errs, fmt.Errorf("--home-workspaces-bucket-size %d is out of range 1-4", o.HomeWorkspacesBucketSize))
	}
	if (o.EtcdCertFile == "") != (o.EtcdKeyFile == "") {
		errs = append(errs, fmt.Errorf("--etcd-certfile and --etcd-keyfile go together"))
	}
	if !strings.HasPrefix(o.EtcdPrefix, "/") || o.EtcdPrefix == "/" {
		errs = append(errs, fmt.Errorf("--etcd-prefix %q must start with / and name a key prefix, e.g. /registry", o.EtcdPrefix))
	}
	if !o.RunVirtualWorkspaces && o.ShardVirtualWorkspaceURL == "" {
		errs = append(errs, fmt.Errorf("--run-virtual-workspaces=false needs --shard-virtual-workspace-url: where tessera-virtual-workspaces serves this shard's virtual workspaces"))
	}
	if o.ShardName == "" {
		errs = append(errs, fmt.Errorf("--shard-name must not be empty"))
	}
	errs = append(errs, o.validateJoin()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Audit.Validate()...)
	return errs
}
