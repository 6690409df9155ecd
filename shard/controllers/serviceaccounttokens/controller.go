package serviceaccounttokens

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/authentication/serviceaccount"
)

const (
	// ControllerName names the controller in logs and its user agent.
	ControllerName = "tessera-serviceaccount-tokens"
	// DefaultWorkers is the number of secrets reconciled in parallel
	// unless WithWorkers says otherwise.
	DefaultWorkers = 2
)

// Controller fills the legacy service account token Secrets of every
// logical cluster of a shard.
type Controller struct {
	ctrl *reconciler.Controller
}

// Option configures a Controller.
type Option func(*reconciler.Options)

// WithWorkers sets the number of secrets reconciled in parallel.
func WithWorkers(n int) Option { return func(o *reconciler.Options) { o.Workers = n } }

// New returns the controller of the shard whose admin loopback config is
// loopback. serviceAccounts is the shard's wildcard service account
// informer, tokenSecrets a wildcard informer of Secrets of type
// kubernetes.io/service-account-token; start them after New. issuer signs
// the tokens and rootCA is written into the Secrets as ca.crt.
func New(loopback *rest.Config, serviceAccounts informers.Informer[*corev1.ServiceAccount], tokenSecrets informers.Informer[*corev1.Secret], issuer *serviceaccount.Issuer, rootCA []byte, opts ...Option) (*Controller, error) {
	if issuer == nil {
		return nil, errors.New("the service account token controller needs an issuer")
	}
	cfg := rest.CopyConfig(loopback)
	rest.AddUserAgent(cfg, ControllerName)
	clients, err := clusters.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s clients: %w", ControllerName, err)
	}
	lookup := serviceaccount.NewServiceAccountLookup(serviceAccounts, clients)
	r := &tokens{
		getSecret: func(cluster logicalcluster.Name, namespace, name string) (*corev1.Secret, error) {
			return tokenSecrets.Lister().Cluster(cluster).Namespace(namespace).Get(name)
		},
		getServiceAccount: func(ctx context.Context, cluster logicalcluster.Name, namespace, name string, uid types.UID) (*corev1.ServiceAccount, error) {
			return lookup.Get(ctx, cluster, namespace, name, serviceaccount.HasUID[*corev1.ServiceAccount](uid))
		},
		issue: issuer.Legacy,
		updateSecret: func(ctx context.Context, cluster logicalcluster.Name, secret *corev1.Secret) error {
			client, err := clients.For(cluster)
			if err != nil {
				return err
			}
			_, err = client.CoreV1().Secrets(secret.Namespace).Update(ctx, secret, metav1.UpdateOptions{})
			return err
		},
		deleteSecret: func(ctx context.Context, cluster logicalcluster.Name, namespace, name string, uid types.UID) error {
			client, err := clients.For(cluster)
			if err != nil {
				return err
			}
			return client.CoreV1().Secrets(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		},
		rootCA: rootCA,
	}
	o := reconciler.Options{Workers: DefaultWorkers}
	for _, opt := range opts {
		opt(&o)
	}
	c := &Controller{ctrl: reconciler.New(ControllerName, r, o)}
	if err := c.ctrl.Watch(tokenSecrets.Informer(), secretHandler(c.ctrl)); err != nil {
		return nil, err
	}
	if err := c.ctrl.Watch(serviceAccounts.Informer(), serviceAccountHandler(c.ctrl, tokenSecrets.Lister())); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return ControllerName }

// Run waits for the informers to sync and reconciles until ctx is done. It
// can be called once.
func (c *Controller) Run(ctx context.Context) error { return c.ctrl.Run(ctx) }

// secretHandler enqueues token Secrets when they are added or updated.
func secretHandler(ctrl *reconciler.Controller) cache.ResourceEventHandler {
	return cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			s, ok := obj.(*corev1.Secret)
			return ok && s.Type == corev1.SecretTypeServiceAccountToken
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    ctrl.EnqueueObject,
			UpdateFunc: func(_, obj any) { ctrl.EnqueueObject(obj) },
		},
	}
}

// serviceAccountHandler enqueues the token Secrets of a deleted service
// account, which the reconciler then deletes.
func serviceAccountHandler(ctrl *reconciler.Controller, secrets informers.Lister[*corev1.Secret]) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			sa, ok := obj.(*corev1.ServiceAccount)
			if !ok {
				return
			}
			cluster := logicalcluster.From(sa)
			list, err := secrets.Cluster(cluster).Namespace(sa.Namespace).List(labels.Everything())
			if err != nil {
				klog.Background().Error(err, "Cannot list the token secrets of a deleted service account", "controller", ControllerName, "cluster", cluster, "serviceAccount", klog.KObj(sa))
				return
			}
			for _, s := range list {
				if s.Annotations[corev1.ServiceAccountNameKey] == sa.Name {
					ctrl.Enqueue(reconciler.Key{Cluster: cluster, Namespace: s.Namespace, Name: s.Name})
				}
			}
		},
	}
}
