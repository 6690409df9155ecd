package servlet

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/syncer/servlet/objects"
	"github.com/tessera-dev/tessera/syncer/servlet/publisher"
)

// Config is what a servlet needs.
type Config struct {
	// Platform reaches the Service's platform workspace (/clusters/<path>).
	Platform *rest.Config
	// Service reaches the service cluster.
	Service *rest.Config
	// ServiceName is the name of the Service in the platform workspace.
	ServiceName string
	// LeaseNamespace and LeaseName locate the leader election Lease on the
	// service cluster.
	LeaseNamespace, LeaseName string
	// Identity names this replica in the Lease; the host name and a random
	// suffix if empty.
	Identity string
	// Workers is the number of objects synced in parallel per published
	// resource.
	Workers int
}

// Run elects a leader among the replicas through a Lease on the service
// cluster; the leader publishes and syncs until ctx is done or it loses
// the Lease. It returns when ctx is done.
func Run(ctx context.Context, cfg Config) error {
	kube, err := kubernetes.NewForConfig(cfg.Service)
	if err != nil {
		return err
	}
	identity := cfg.Identity
	if identity == "" {
		host, _ := os.Hostname()
		identity = host + "_" + string(uuid.NewUUID())
	}
	logger := klog.FromContext(ctx).WithValues("identity", identity)
	ctx = klog.NewContext(ctx, logger)
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.LeaseNamespace, Name: cfg.LeaseName},
				Client:     kube.CoordinationV1(),
				LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
			},
			LeaseDuration:   15 * time.Second,
			RenewDeadline:   10 * time.Second,
			RetryPeriod:     2 * time.Second,
			ReleaseOnCancel: true,
			Name:            cfg.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					logger.Info("Leading")
					// The leader keeps the Lease until ctx ends, so it
					// starts again after a failure (the platform not
					// reachable or not allowing it yet) rather than
					// holding the Lease idle.
					backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 6, Cap: 30 * time.Second}
					for ctx.Err() == nil {
						err := lead(ctx, cfg)
						if ctx.Err() != nil {
							return
						}
						delay := backoff.Step()
						logger.Error(err, "Servlet stopped; starting again", "after", delay)
						select {
						case <-ctx.Done():
						case <-time.After(delay):
						}
					}
				},
				OnStoppedLeading: func() { logger.Info("Not leading") },
			},
		})
		if err != nil {
			return err
		}
		le.Run(ctx)
	}
	return nil
}

// lead publishes and syncs until ctx is done.
func lead(ctx context.Context, cfg Config) error {
	p, err := publisher.New(cfg.Service, cfg.Platform, cfg.ServiceName)
	if err != nil {
		return err
	}
	m, err := objects.NewManager(cfg.Platform, cfg.Service, cfg.Workers)
	if err != nil {
		return err
	}
	m.Start(ctx)
	defer m.Stop()
	p.OnPublished(m.Sync)
	if err := p.Run(ctx); err != nil {
		return fmt.Errorf("publishing: %w", err)
	}
	return nil
}
