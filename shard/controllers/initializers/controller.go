package initializers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// ControllerName names the controller in logs, queue metrics and its
	// user agent.
	ControllerName = "builtin-initializers"
	// DefaultWorkers is the number of logical clusters initialized in
	// parallel unless Config.Workers says otherwise.
	DefaultWorkers = 10
)

// Config configures the built-in initializers of a shard.
type Config struct {
	// Informers is the shard's wildcard informer factory. New adds its
	// LogicalClusters informer; start the factory after New.
	Informers *informers.SharedInformerFactory
	// Loopback is the admin config of this shard (a trailing
	// /clusters/<name> is ignored).
	Loopback *rest.Config
	// ExternalURL is the shard's external URL (Shard spec.externalURL, or
	// spec.baseURL), the base of the LogicalClusters' status.URL. Empty
	// leaves status.URL alone.
	ExternalURL string
	// Workers is the number of logical clusters initialized in parallel;
	// zero means DefaultWorkers.
	Workers int
}

// Controller runs the built-in initializers of the logical clusters of a
// shard.
type Controller struct {
	ctrl *reconciler.Controller
}

// New returns the controller for all logical clusters of the shard.
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
	kcp, err := clusters.NewKCPForConfigAndClient(loopback, httpClient)
	if err != nil {
		return nil, fmt.Errorf("%s controller: %w", ControllerName, err)
	}
	kube, err := clusters.NewForConfigAndClient(loopback, httpClient)
	if err != nil {
		return nil, fmt.Errorf("%s controller: %w", ControllerName, err)
	}

	lcs := cfg.Informers.LogicalClusters()
	r := &initializer{
		externalURL: cfg.ExternalURL,
		getLogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			return lcs.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
		},
		readLogicalCluster: func(ctx context.Context, cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			c, err := kcp.For(cluster)
			if err != nil {
				return nil, err
			}
			return c.LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		},
		updateStatus: func(ctx context.Context, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) error {
			c, err := kcp.For(cluster)
			if err != nil {
				return err
			}
			_, err = c.LogicalClusters().UpdateStatus(ctx, lc, metav1.UpdateOptions{})
			return err
		},
		createClusterRoleBinding: func(ctx context.Context, cluster logicalcluster.Name, crb *rbacv1.ClusterRoleBinding) error {
			c, err := kube.For(cluster)
			if err != nil {
				return err
			}
			_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
			return err
		},
		getClusterRoleBinding: func(ctx context.Context, cluster logicalcluster.Name, name string) (*rbacv1.ClusterRoleBinding, error) {
			c, err := kube.For(cluster)
			if err != nil {
				return nil, err
			}
			return c.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		},
		updateClusterRoleBinding: func(ctx context.Context, cluster logicalcluster.Name, crb *rbacv1.ClusterRoleBinding) error {
			c, err := kube.For(cluster)
			if err != nil {
				return err
			}
			_, err = c.RbacV1().ClusterRoleBindings().Update(ctx, crb, metav1.UpdateOptions{})
			return err
		},
		deleteClusterRoleBinding: func(ctx context.Context, cluster logicalcluster.Name, name string, uid types.UID) error {
			c, err := kube.For(cluster)
			if err != nil {
				return err
			}
			return c.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		},
		createNamespace: func(ctx context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) error {
			c, err := kube.For(cluster)
			if err != nil {
				return err
			}
			_, err = c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
			return err
		},
	}

	workers := cfg.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	c := reconciler.New(ControllerName, reconciler.Func(r.reconcile), reconciler.Options{Workers: workers})
	handler := cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			lc, ok := obj.(*corev1alpha1.LogicalCluster)
			return ok && lc.Name == corev1alpha1.LogicalClusterName && needsWork(lc, logicalcluster.From(lc), cfg.ExternalURL)
		},
		Handler: reconciler.EnqueueMappedHandler(c, func(lc *corev1alpha1.LogicalCluster) []reconciler.Key {
			return []reconciler.Key{{Cluster: logicalcluster.From(lc)}}
		}),
	}
	if err := c.Watch(lcs.Informer(), handler); err != nil {
		return nil, err
	}
	return &Controller{ctrl: c}, nil
}

// Name returns ControllerName.
func (c *Controller) Name() string { return c.ctrl.Name() }

// Run initializes logical clusters until ctx is done.
func (c *Controller) Run(ctx context.Context) error { return c.ctrl.Run(ctx) }
