package workspacetype

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// ControllerName names the controller in logs, queue metrics and its
	// user agent.
	ControllerName = "workspacetype"
	// DefaultWorkers is the number of WorkspaceTypes reconciled in
	// parallel unless Config.Workers says otherwise.
	DefaultWorkers = 2
)

// Config configures the WorkspaceType status controller of a shard.
type Config struct {
	// Informers is the shard's wildcard informer factory. New adds its
	// WorkspaceTypes informer (and its Shards informer unless Shards is
	// set); start the factory after New.
	Informers *informers.SharedInformerFactory
	// Shards, if set, is where Shard objects (of root) are read from
	// instead of Informers.Shards().
	Shards *informers.Informer[*corev1alpha1.Shard]
	// Loopback is the admin config of this shard (a trailing
	// /clusters/<name> is ignored).
	Loopback *rest.Config
	// Workers is the number of types reconciled in parallel; zero means
	// DefaultWorkers.
	Workers int
}

// Controller maintains status.virtualWorkspaces and the Ready condition of
// the WorkspaceTypes of a shard.
type Controller struct {
	ctrl *reconciler.Controller
}

// New returns the controller for all WorkspaceTypes of the shard.
func New(cfg Config) (*Controller, error) {
	if cfg.Informers == nil || cfg.Loopback == nil {
		return nil, fmt.Errorf("%s controller: Informers and Loopback are required", ControllerName)
	}
	loopback := rest.CopyConfig(cfg.Loopback)
	rest.AddUserAgent(loopback, ControllerName)
	httpClient, err := rest.HTTPClientFor(loopback)
	if err != nil {
		return nil, fmt.Errorf("%s controller: building http client: %w", ControllerName, err)
	}
	clients, err := clusters.NewKCPForConfigAndClient(loopback, httpClient)
	if err != nil {
		return nil, fmt.Errorf("%s controller: %w", ControllerName, err)
	}

	types := cfg.Informers.WorkspaceTypes()
	var shards informers.Informer[*corev1alpha1.Shard]
	if cfg.Shards != nil {
		shards = *cfg.Shards
	} else {
		shards = cfg.Informers.Shards()
	}
	r := &statusReconciler{
		getType: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.WorkspaceType, error) {
			return types.Lister().Cluster(cluster).Get(name)
		},
		listShards: func() ([]*corev1alpha1.Shard, error) {
			return shards.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
		},
		updateStatus: func(ctx context.Context, cluster logicalcluster.Name, wt *tenancyv1alpha1.WorkspaceType) error {
			c, err := clients.For(cluster)
			if err != nil {
				return err
			}
			_, err = c.WorkspaceTypes().UpdateStatus(ctx, wt, metav1.UpdateOptions{})
			return err
		},
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	c := reconciler.New(ControllerName, reconciler.Func(r.reconcile), reconciler.Options{Workers: workers})
	if err := c.Watch(types.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	if err := c.Watch(shards.Informer(), reconciler.EnqueueMappedHandler(c, func(s *corev1alpha1.Shard) []reconciler.Key {
		return typesForShard(s, func() ([]*tenancyv1alpha1.WorkspaceType, error) {
			return types.Lister().List(labels.Everything())
		})
	})); err != nil {
		return nil, err
	}
	return &Controller{ctrl: c}, nil
}

// typesForShard returns the keys of the WorkspaceTypes an event of the
// Shard s concerns: all of them for a Shard of root, none for a Shard
// elsewhere, which is not part of the installation.
func typesForShard(s *corev1alpha1.Shard, list func() ([]*tenancyv1alpha1.WorkspaceType, error)) []reconciler.Key {
	if logicalcluster.From(s) != logicalcluster.Root {
		return nil
	}
	all, err := list()
	if err != nil {
		return nil
	}
	keys := make([]reconciler.Key, 0, len(all))
	for _, wt := range all {
		keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(wt), Name: wt.Name})
	}
	return keys
}

// Name returns ControllerName.
func (c *Controller) Name() string { return c.ctrl.Name() }

// Run reconciles WorkspaceTypes until ctx is done.
func (c *Controller) Run(ctx context.Context) error { return c.ctrl.Run(ctx) }
