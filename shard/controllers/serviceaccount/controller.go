package serviceaccount

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// ControllerName names the controller in logs, metrics and its user
	// agent.
	ControllerName = "tessera-serviceaccount"
	// DefaultWorkers is the number of namespaces reconciled in parallel
	// unless WithWorkers says otherwise.
	DefaultWorkers = 2
)

// Controller gives every namespace of every logical cluster of a shard a
// default service account.
type Controller struct {
	ctrl            *reconciler.Controller
	namespaces      informers.Informer[*corev1.Namespace]
	serviceAccounts informers.Informer[*corev1.ServiceAccount]
}

// Option configures a Controller.
type Option func(*reconciler.Options)

// WithWorkers sets the number of namespaces reconciled in parallel.
func WithWorkers(n int) Option { return func(o *reconciler.Options) { o.Workers = n } }

// New returns the controller of the shard whose admin loopback config is
// loopback, reading namespaces and service accounts from f. Start f after
// New.
func New(loopback *rest.Config, f *informers.SharedInformerFactory, opts ...Option) (*Controller, error) {
	cfg := rest.CopyConfig(loopback)
	rest.AddUserAgent(cfg, ControllerName)
	clients, err := clusters.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s clients: %w", ControllerName, err)
	}
	c := &Controller{
		namespaces:      f.Namespaces(),
		serviceAccounts: f.ServiceAccounts(),
	}
	r := &serviceAccounts{
		getNamespace: func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
			return c.namespaces.Lister().Cluster(cluster).Get(name)
		},
		getServiceAccount: func(cluster logicalcluster.Name, namespace, name string) (*corev1.ServiceAccount, error) {
			return c.serviceAccounts.Lister().Cluster(cluster).Namespace(namespace).Get(name)
		},
		createServiceAccount: func(ctx context.Context, cluster logicalcluster.Name, sa *corev1.ServiceAccount) error {
			client, err := clients.For(cluster)
			if err != nil {
				return err
			}
			_, err = client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{})
			return err
		},
	}
	o := reconciler.Options{Workers: DefaultWorkers}
	for _, opt := range opts {
		opt(&o)
	}
	c.ctrl = reconciler.New(ControllerName, r, o)
	if err := c.ctrl.Watch(c.namespaces.Informer(), namespaceHandler(c.ctrl)); err != nil {
		return nil, err
	}
	if err := c.ctrl.Watch(c.serviceAccounts.Informer(), serviceAccountHandler(c.ctrl)); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return ControllerName }

// Run waits for the informers to sync and reconciles until ctx is done. It
// can be called once.
func (c *Controller) Run(ctx context.Context) error { return c.ctrl.Run(ctx) }

// namespaceHandler enqueues namespaces when they are added, and when they
// are updated while active (a resync repairs a lost service account).
func namespaceHandler(ctrl *reconciler.Controller) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: ctrl.EnqueueObject,
		UpdateFunc: func(_, obj any) {
			if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceActive {
				ctrl.EnqueueObject(obj)
			}
		},
	}
}

// serviceAccountHandler enqueues the namespace of a deleted default service
// account.
func serviceAccountHandler(ctrl *reconciler.Controller) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			sa, ok := obj.(*corev1.ServiceAccount)
			if !ok || sa.Name != DefaultServiceAccountName {
				return
			}
			ctrl.Enqueue(reconciler.Key{Cluster: logicalcluster.From(sa), Name: sa.Namespace})
		},
	}
}
