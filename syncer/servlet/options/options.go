// Package options holds the flags of tessera-servlet.
package options

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/tessera-dev/tessera/syncer/servlet"
)

// Defaults of the flags.
const (
	DefaultNamespace = "default"
	DefaultLeaseName = "tessera-servlet"
	DefaultQPS       = 20
	DefaultBurst     = 30
	DefaultWorkers   = 4
)

// Options are the flags of tessera-servlet.
type Options struct {
	// PlatformKubeconfig reaches the platform workspace of the Service
	// (its server is the workspace's URL); PlatformContext picks a context.
	PlatformKubeconfig string
	PlatformContext    string
	// ServiceKubeconfig reaches the service cluster; empty means the
	// in-cluster configuration. ServiceContext picks a context.
	ServiceKubeconfig string
	ServiceContext    string
	// ServiceName is the Service (core.kdp.k8c.io) in the platform
	// workspace whose API group the servlet publishes into.
	ServiceName string
	// Namespace and LeaseName locate the leader election Lease on the
	// service cluster.
	Namespace string
	LeaseName string

	QPS     float32
	Burst   int
	Workers int
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{Namespace: DefaultNamespace, LeaseName: DefaultLeaseName, QPS: DefaultQPS, Burst: DefaultBurst, Workers: DefaultWorkers}
}

// AddFlags adds the flags.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("servlet")
	fs.StringVar(&o.PlatformKubeconfig, "platform-kubeconfig", o.PlatformKubeconfig, "Kubeconfig of the platform workspace of the Service.")
	fs.StringVar(&o.PlatformContext, "platform-context", o.PlatformContext, "Context of --platform-kubeconfig to use (its current context when empty).")
	fs.StringVar(&o.ServiceKubeconfig, "service-kubeconfig", o.ServiceKubeconfig, "Kubeconfig of the service cluster (in-cluster configuration when empty).")
	fs.StringVar(&o.ServiceContext, "service-context", o.ServiceContext, "Context of --service-kubeconfig to use (its current context when empty).")
	fs.StringVar(&o.ServiceName, "service-name", o.ServiceName, "Name of the Service (core.kdp.k8c.io/v1alpha1) in the platform workspace; its spec.apiGroup is the group of the published resources and the name of their APIExport.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Namespace of the leader election Lease on the service cluster.")
	fs.StringVar(&o.LeaseName, "lease-name", o.LeaseName, "Name of the leader election Lease on the service cluster.")
	fs.Float32Var(&o.QPS, "qps", o.QPS, "Queries per second to each of the platform and the service cluster.")
	fs.IntVar(&o.Burst, "burst", o.Burst, "Burst of queries to each of the platform and the service cluster.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Objects of one published resource synced in parallel.")
}

// Completed are completed options.
type Completed struct{ *Options }

// Complete fills what has defaults.
func (o *Options) Complete() (Completed, error) { return Completed{o}, nil }

// Validate returns every problem of the options.
func (o Completed) Validate() []error {
	var errs []error
	if o.PlatformKubeconfig == "" {
		errs = append(errs, errors.New("--platform-kubeconfig is required"))
	}
	if o.ServiceName == "" {
		errs = append(errs, errors.New("--service-name is required"))
	}
	for flag, v := range map[string]string{"--namespace": o.Namespace, "--lease-name": o.LeaseName} {
		for _, msg := range validation.IsDNS1123Label(v) {
			errs = append(errs, fmt.Errorf("%s %q: %s", flag, v, msg))
		}
	}
	if o.QPS <= 0 || o.Burst <= 0 || o.Workers <= 0 {
		errs = append(errs, errors.New("--qps, --burst and --workers must be positive"))
	}
	return errs
}

// Config returns the servlet's configuration: both clients' configurations
// loaded, with the QPS, burst and user agent of the options.
func (o Completed) Config() (servlet.Config, error) {
	platform, err := load(o.PlatformKubeconfig, o.PlatformContext)
	if err != nil {
		return servlet.Config{}, fmt.Errorf("--platform-kubeconfig: %w", err)
	}
	var service *rest.Config
	if o.ServiceKubeconfig == "" {
		service, err = rest.InClusterConfig()
	} else {
		service, err = load(o.ServiceKubeconfig, o.ServiceContext)
	}
	if err != nil {
		return servlet.Config{}, fmt.Errorf("the service cluster's configuration (--service-kubeconfig): %w", err)
	}
	for _, cfg := range []*rest.Config{platform, service} {
		cfg.QPS, cfg.Burst = o.QPS, o.Burst
		cfg.UserAgent = "tessera-servlet/" + o.ServiceName
	}
	return servlet.Config{
		Platform: platform, Service: service, ServiceName: o.ServiceName,
		LeaseNamespace: o.Namespace, LeaseName: o.LeaseName, Workers: o.Workers,
	}, nil
}

func load(path, context string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}
