package namespace

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// ControllerName names the controller in logs, metrics and its user
	// agent.
	ControllerName = "tessera-namespace"
	// DefaultWorkers is the number of namespaces processed in parallel
	// unless WithWorkers says otherwise.
	DefaultWorkers = 2

	// discoveryClients bounds the per-cluster discovery clients kept; they
	// are rebuilt on demand and hold no discovered data.
	discoveryClients = 64
)

// Controller deletes the content of terminating namespaces in every logical
// cluster of a shard and then finalizes them.
type Controller struct {
	ctrl       *reconciler.Controller
	namespaces informers.Informer[*corev1.Namespace]
}

// Option configures a Controller.
type Option func(*reconciler.Options)

// WithWorkers sets the number of namespaces processed in parallel.
func WithWorkers(n int) Option { return func(o *reconciler.Options) { o.Workers = n } }

// New returns the controller of the shard whose admin loopback config is
// loopback, reading namespaces from f. Start f after New.
func New(loopback *rest.Config, f *informers.SharedInformerFactory, opts ...Option) (*Controller, error) {
	cfg := rest.CopyConfig(loopback)
	rest.AddUserAgent(cfg, ControllerName)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s http client: %w", ControllerName, err)
	}
	kube, err := clusters.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building %s clients: %w", ControllerName, err)
	}
	meta, err := clusters.NewCache(cfg, httpClient, func(c *rest.Config, h *http.Client) (metadata.Interface, error) {
		return metadata.NewForConfigAndClient(c, h)
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("building %s metadata clients: %w", ControllerName, err)
	}
	disco, err := clusters.NewCache(cfg, httpClient, func(c *rest.Config, h *http.Client) (*discovery.DiscoveryClient, error) {
		return discovery.NewDiscoveryClientForConfigAndClient(c, h)
	}, discoveryClients)
	if err != nil {
		return nil, fmt.Errorf("building %s discovery clients: %w", ControllerName, err)
	}

	c := &Controller{namespaces: f.Namespaces()}
	r := &namespaces{
		getNamespace: func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
			return c.namespaces.Lister().Cluster(cluster).Get(name)
		},
		getLiveNamespace: func(ctx context.Context, cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
			client, err := kube.For(cluster)
			if err != nil {
				return nil, err
			}
			return client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		},
		discover: func(ctx context.Context, cluster logicalcluster.Name) ([]resource, *discoveryError) {
			return discover(ctx, disco, cluster)
		},
		content:      newContentClient(meta),
		updateStatus: namespaceWriter(kube, kubernetesUpdateStatus),
		finalize:     namespaceWriter(kube, kubernetesFinalize),
		now:          time.Now,
	}
	o := reconciler.Options{Workers: DefaultWorkers}
	for _, opt := range opts {
		opt(&o)
	}
	c.ctrl = reconciler.New(ControllerName, r, o)
	if err := c.ctrl.Watch(c.namespaces.Informer(), terminatingHandler(c.ctrl)); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return ControllerName }

// Run waits for the namespace informer to sync and reconciles until ctx is
// done. It can be called once.
func (c *Controller) Run(ctx context.Context) error { return c.ctrl.Run(ctx) }

// terminatingHandler enqueues namespaces that are being deleted.
func terminatingHandler(ctrl *reconciler.Controller) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			ctrl.EnqueueObject(ns)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}
}

// discover returns the deletable namespaced resources of a logical cluster,
// built-in and CRDs, in their preferred versions.
func discover(ctx context.Context, disco *clusters.Cache[*discovery.DiscoveryClient], cluster logicalcluster.Name) ([]resource, *discoveryError) {
	client, err := disco.For(cluster)
	if err != nil {
		return nil, &discoveryError{discovery: err}
	}
	lists, discoveryErr := discovery.ServerPreferredNamespacedResourcesWithContext(ctx, client)
	resources, parseErr := deletableResources(lists)
	if discoveryErr == nil && parseErr == nil {
		return resources, nil
	}
	return resources, &discoveryError{discovery: discoveryErr, parse: parseErr}
}

// newContentClient reaches namespaced objects through per-cluster metadata
// clients, which move object metadata only.
func newContentClient(meta *clusters.Cache[metadata.Interface]) contentClient {
	background := metav1.DeletePropagationBackground
	return contentClient{
		deleteCollection: func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) error {
			client, err := meta.For(cluster)
			if err != nil {
				return err
			}
			return client.Resource(gvr).Namespace(namespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{})
		},
		list: func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) ([]metav1.PartialObjectMetadata, error) {
			client, err := meta.For(cluster)
			if err != nil {
				return nil, err
			}
			list, err := client.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return list.Items, nil
		},
		deleteObject: func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace, name string, uid types.UID) error {
			client, err := meta.For(cluster)
			if err != nil {
				return err
			}
			return client.Resource(gvr).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{
				PropagationPolicy: &background,
				Preconditions:     &metav1.Preconditions{UID: ptr.To(uid)},
			})
		},
	}
}

// namespaceWrite is one write of a namespace through a clientset.
type namespaceWrite func(ctx context.Context, client kubernetes.Interface, ns *corev1.Namespace) (*corev1.Namespace, error)

func kubernetesUpdateStatus(ctx context.Context, client kubernetes.Interface, ns *corev1.Namespace) (*corev1.Namespace, error) {
	return client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{})
}

func kubernetesFinalize(ctx context.Context, client kubernetes.Interface, ns *corev1.Namespace) (*corev1.Namespace, error) {
	return client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
}

// namespaceWriter runs write with the clientset of a logical cluster.
func namespaceWriter(kube *clusters.ClusterClientset, write namespaceWrite) func(context.Context, logicalcluster.Name, *corev1.Namespace) (*corev1.Namespace, error) {
	return func(ctx context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) (*corev1.Namespace, error) {
		client, err := kube.For(cluster)
		if err != nil {
			return nil, err
		}
		return write(ctx, client, ns)
	}
}
