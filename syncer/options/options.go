// Package options holds the flags of tessera-syncer, kcp's syncer flags.
package options

import (
	"errors"
	"fmt"
	"strings"
	"time"

	cliflag "k8s.io/component-base/cli/flag"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Defaults of the flags.
const (
	DefaultHeartbeatInterval             = 20 * time.Second
	DefaultDownstreamNamespaceCleanDelay = 30 * time.Second
	DefaultQPS                           = 20
	DefaultBurst                         = 30
	DefaultWorkers                       = 4
)

// Options are the flags of tessera-syncer.
type Options struct {
	// FromKubeconfig reaches the workspace of the SyncTarget (its server
	// is the workspace's URL) as the syncer's service account; FromContext
	// picks a context of it (the current one when empty).
	FromKubeconfig string
	FromContext    string
	// FromCluster is the logical cluster of the SyncTarget; it must match
	// the SyncTarget's kcp.io/cluster annotation when given.
	FromCluster string
	// ToKubeconfig reaches the physical cluster; empty means the in-cluster
	// configuration of the pod the syncer runs in. ToContext picks a
	// context of it.
	ToKubeconfig string
	ToContext    string

	SyncTargetName string
	SyncTargetUID  string

	// Resources are custom resources of the physical cluster to import
	// into the SyncTarget's workspace and sync, as <plural>.<group> (a
	// CRD's name).
	Resources []string

	QPS   float32
	Burst int
	// Workers reconcile objects of one resource in parallel.
	Workers int

	HeartbeatInterval             time.Duration
	DownstreamNamespaceCleanDelay time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		QPS:                           DefaultQPS,
		Burst:                         DefaultBurst,
		Workers:                       DefaultWorkers,
		HeartbeatInterval:             DefaultHeartbeatInterval,
		DownstreamNamespaceCleanDelay: DefaultDownstreamNamespaceCleanDelay,
	}
}

// AddFlags adds the flags, named as kcp's syncer names them.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("syncer")
	fs.StringVar(&o.FromKubeconfig, "from-kubeconfig", o.FromKubeconfig, "Kubeconfig of the workspace of the SyncTarget, as its syncer's service account.")
	fs.StringVar(&o.FromContext, "from-context", o.FromContext, "Context of --from-kubeconfig to use (its current context when empty).")
	fs.StringVar(&o.FromCluster, "from-cluster", o.FromCluster, "Logical cluster of the SyncTarget (checked against the SyncTarget when given).")
	fs.StringVar(&o.ToKubeconfig, "to-kubeconfig", o.ToKubeconfig, "Kubeconfig of the physical cluster (in-cluster configuration when empty).")
	fs.StringVar(&o.ToContext, "to-context", o.ToContext, "Context of --to-kubeconfig to use (its current context when empty).")
	fs.StringVar(&o.SyncTargetName, "sync-target-name", o.SyncTargetName, "Name of the SyncTarget.")
	fs.StringVar(&o.SyncTargetUID, "sync-target-uid", o.SyncTargetUID, "UID of the SyncTarget: the syncer refuses a SyncTarget of the same name but another UID.")
	fs.StringSliceVar(&o.Resources, "resources", o.Resources, "Custom resources of the physical cluster to import into the SyncTarget's workspace (its APIExport kubernetes) and sync, as <plural>.<group> (repeatable, comma-separated).")
	fs.Float32Var(&o.QPS, "qps", o.QPS, "Queries per second to each of the workspace and the physical cluster.")
	fs.IntVar(&o.Burst, "burst", o.Burst, "Burst of queries to each of the workspace and the physical cluster.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Objects of one resource synced in parallel.")
	fs.DurationVar(&o.HeartbeatInterval, "heartbeat-interval", o.HeartbeatInterval, "How often the syncer sets the SyncTarget's status.lastSyncerHeartbeatTime.")
	fs.DurationVar(&o.DownstreamNamespaceCleanDelay, "downstream-namespace-clean-delay", o.DownstreamNamespaceCleanDelay, "How long a downstream namespace without synced objects stays before it is deleted.")
}

// Completed are validated options.
type Completed struct{ *Options }

// Complete fills what has defaults.
func (o *Options) Complete() (Completed, error) {
	var resources []string
	for _, r := range o.Resources {
		if r = strings.TrimSpace(r); r != "" {
			resources = append(resources, r)
		}
	}
	o.Resources = resources
	return Completed{o}, nil
}

// Validate returns every problem of the options.
func (o Completed) Validate() []error {
	var errs []error
	if o.FromKubeconfig == "" {
		errs = append(errs, errors.New("--from-kubeconfig is required"))
	}
	if o.SyncTargetName == "" {
		errs = append(errs, errors.New("--sync-target-name is required"))
	}
	if o.SyncTargetUID == "" {
		errs = append(errs, errors.New("--sync-target-uid is required"))
	}
	if o.FromCluster != "" && !logicalcluster.Name(o.FromCluster).IsValid() {
		errs = append(errs, fmt.Errorf("--from-cluster %q: %s", o.FromCluster, logicalcluster.ValidationMessage))
	}
	for _, r := range o.Resources {
		if plural, group, ok := strings.Cut(r, "."); !ok || plural == "" || group == "" || strings.ContainsAny(r, "/ ") {
			errs = append(errs, fmt.Errorf("--resources %q: want <plural>.<group>, the name of a CustomResourceDefinition of the physical cluster, e.g. routes.route.openshift.io", r))
		}
	}
	if o.QPS <= 0 || o.Burst <= 0 || o.Workers <= 0 {
		errs = append(errs, errors.New("--qps, --burst and --workers must be positive"))
	}
	if o.HeartbeatInterval <= 0 || o.DownstreamNamespaceCleanDelay < 0 {
		errs = append(errs, errors.New("--heartbeat-interval must be positive and --downstream-namespace-clean-delay not negative"))
	}
	return errs
}
