package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// ControllerName names the controller in logs, metrics and its user
	// agent. Its resource loop is named ControllerName + "-resources".
	ControllerName = "tessera-garbagecollector"
	// DefaultWorkers is the number of owners processed in parallel unless
	// WithWorkers says otherwise.
	DefaultWorkers = 4

	// crdNameIndex indexes the shared CRD informer by CRD name, across
	// logical clusters.
	crdNameIndex = "garbagecollector-crd-name"

	// builtinDiscoveryAttempts is how often discovery of the built-in
	// resources is tried before the controller makes do with a partial
	// result.
	builtinDiscoveryAttempts = 5
	// maxDiscoveryDelay caps the delay between discovery attempts.
	maxDiscoveryDelay = 30 * time.Second
)

// Controller is the garbage collector of a shard: one instance serves all
// logical clusters.
type Controller struct {
	crds informers.Informer[*apiextensionsv1.CustomResourceDefinition]
	// discovery discovers the built-in resources at /clusters/*.
	discovery discovery.DiscoveryInterfaceWithContext
	// wildcard lists and watches metadata across all logical clusters.
	wildcard metadata.Interface
	// meta and crdClients read and write in one logical cluster.
	meta       *clusters.Cache[metadata.Interface]
	crdClients *clusters.APIExtensionsClusterClientset
	workers    int
	// boundNamed, bindings and boundNames: see WithBoundResources.
	boundNamed func(name string) []*apiextensionsv1.CustomResourceDefinition
	bindings   cache.SharedInformer
	boundNames func(obj any) []string

	mu      sync.Mutex
	started bool
}

// Option configures a Controller.
type Option func(*Controller)

// WithWorkers sets the number of owners processed in parallel.
func WithWorkers(n int) Option { return func(c *Controller) { c.workers = n } }

// WithBoundResources has the collector monitor resources bound through
// APIBindings as it monitors custom resources: named returns, for a name
// <plural>.<group> that no CRD has, the synthetic CRD its requests across
// all clusters are served with (none when it is not bound, or bound under
// several identities, which /clusters/* does not serve without one);
// names maps an event of bindings to the names it may change.
func WithBoundResources(named func(name string) []*apiextensionsv1.CustomResourceDefinition, bindings cache.SharedInformer, names func(obj any) []string) Option {
	return func(c *Controller) {
		c.boundNamed, c.bindings, c.boundNames = named, bindings, names
	}
}

// New returns the garbage collector of the shard whose admin loopback
// config is loopback. It asks f for the wildcard CRD informer and adds an
// index to it; start f after New.
func New(loopback *rest.Config, f *informers.SharedInformerFactory, opts ...Option) (*Controller, error) {
	cfg := rest.CopyConfig(loopback)
	rest.AddUserAgent(cfg, ControllerName)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s http client: %w", ControllerName, err)
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(clusters.WildcardConfig(cfg), httpClient)
	if err != nil {
		return nil, fmt.Errorf("building %s discovery client: %w", ControllerName, err)
	}
	wildcard, err := metadata.NewForConfigAndClient(clusters.WildcardConfig(cfg), httpClient)
	if err != nil {
		return nil, fmt.Errorf("building %s wildcard metadata client: %w", ControllerName, err)
	}
	meta, err := clusters.NewCache(cfg, httpClient, func(c *rest.Config, h *http.Client) (metadata.Interface, error) {
		return metadata.NewForConfigAndClient(c, h)
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("building %s metadata clients: %w", ControllerName, err)
	}
	crdClients, err := clusters.NewAPIExtensionsForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building %s CRD clients: %w", ControllerName, err)
	}

	crds := f.CustomResourceDefinitions()
	if err := addCRDNameIndex(crds.Informer()); err != nil {
		return nil, err
	}
	c := &Controller{crds: crds, discovery: disco, wildcard: wildcard, meta: meta, crdClients: crdClients, workers: DefaultWorkers}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return ControllerName }

// addCRDNameIndex indexes CRDs by name, unless the informer already has
// that index (another garbage collector on the same factory).
func addCRDNameIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[crdNameIndex]; ok {
		return nil
	}
	err := informer.AddIndexers(cache.Indexers{crdNameIndex: func(obj any) ([]string, error) {
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return nil, nil
		}
		return []string{crd.Name}, nil
	}})
	if err != nil {
		return fmt.Errorf("indexing CRDs by name: %w", err)
	}
	return nil
}

// Run discovers the built-in resources, monitors them and the custom
// resources of every CRD, and collects garbage until ctx is done. It can be
// called once.
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New(ControllerName + " controller has already run")
	}
	c.started = true
	c.mu.Unlock()

	logger := klog.FromContext(ctx).WithValues("controller", ControllerName)
	ctx = klog.NewContext(ctx, logger)
	b, err := c.discoverBuiltins(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	logger.Info("Discovered built-in resources", "monitored", len(b.resources), "kinds", len(b.kinds))

	var gc *reconciler.Controller
	monitors := newMonitorSet(c.listWatch, monitorHandler(func(key reconciler.Key) { gc.Enqueue(key) }))
	gc = reconciler.New(ControllerName, c.newCollector(monitors, b), reconciler.Options{Workers: c.workers})
	resources := reconciler.New(ControllerName+"-resources", c.newResourceSync(monitors, b), reconciler.Options{Workers: 1})

	// The monitors stop when Run returns, also on error.
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		monitors.wait()
	}()
	monitors.start(ctx)
	for _, gvr := range b.resources {
		informer, err := monitors.ensure(gvr)
		if err != nil {
			return err
		}
		gc.WaitFor(informer.HasSynced)
	}
	err = resources.Watch(c.crds.Informer(), reconciler.EnqueueMappedHandler(resources, func(crd *apiextensionsv1.CustomResourceDefinition) []reconciler.Key {
		return []reconciler.Key{{Name: crd.Name}}
	}))
	if err != nil {
		return err
	}
	if c.bindings != nil {
		enqueue := func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			for _, name := range c.boundNames(obj) {
				resources.Enqueue(reconciler.Key{Name: name})
			}
		}
		// Most updates of a binding (conditions, claims) leave what it
		// binds alone: only a change of that may change what is monitored.
		err = resources.Watch(c.bindings, cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue,
			UpdateFunc: func(oldObj, obj any) {
				if !slices.Equal(c.boundNames(oldObj), c.boundNames(obj)) {
					enqueue(oldObj)
					enqueue(obj)
				}
			},
			DeleteFunc: enqueue,
		})
		if err != nil {
			return err
		}
	}

	var (
		wg   sync.WaitGroup
		errs = make([]error, 2)
	)
	wg.Go(func() { errs[0] = resources.Run(ctx) })
	wg.Go(func() { errs[1] = gc.Run(ctx) })
	wg.Wait()
	return utilerrors.NewAggregate(errs)
}

// discoverBuiltins discovers the built-in resources, served alike in every
// logical cluster, at /clusters/*. It retries with backoff until discovery
// is complete, or settles for a partial result after a few attempts.
func (c *Controller) discoverBuiltins(ctx context.Context) (*builtins, error) {
	logger := klog.FromContext(ctx)
	delay := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		lists, err := discovery.ServerPreferredResourcesWithContext(ctx, c.discovery)
		b, parseErr := builtinResources(lists)
		if err == nil && parseErr == nil {
			return b, nil
		}
		err = errors.Join(err, parseErr)
		if len(b.resources) > 0 && attempt >= builtinDiscoveryAttempts {
			logger.Error(err, "Discovery of built-in resources is incomplete, monitoring those found")
			return b, nil
		}
		logger.Info("Retrying discovery of built-in resources", "err", err, "after", delay)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("discovering built-in resources: %w", ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, maxDiscoveryDelay)
	}
}

// listWatch lists and watches the metadata of gvr in all logical clusters.
func (c *Controller) listWatch(gvr schema.GroupVersionResource) cache.ListerWatcher {
	client := c.wildcard.Resource(gvr)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, opts)
		},
	}
}

// newCollector wires the reconcile logic to the monitors and to
// per-cluster metadata clients.
func (c *Controller) newCollector(monitors *monitorSet, b *builtins) *collector {
	lookup := &ownerLookup{
		builtins: b,
		cachedCRDs: func(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
			return c.crds.Lister().Cluster(cluster).List(nil)
		},
		liveCRDs: func(ctx context.Context, cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
			client, err := c.crdClients.For(cluster)
			if err != nil {
				return nil, err
			}
			list, err := client.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			out := make([]*apiextensionsv1.CustomResourceDefinition, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		},
		served: func(ctx context.Context, cluster logicalcluster.Name, gvk schema.GroupVersionKind) (kindInfo, bool, error) {
			client, err := c.crdClients.For(cluster)
			if err != nil {
				return kindInfo{}, false, err
			}
			list, err := client.Discovery().ServerResourcesForGroupVersion(gvk.GroupVersion().String())
			if apierrors.IsNotFound(err) {
				return kindInfo{}, false, nil
			}
			if err != nil {
				return kindInfo{}, false, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), err)
			}
			for _, r := range list.APIResources {
				if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
					return kindInfo{resource: gvk.GroupVersion().WithResource(r.Name), namespaced: r.Namespaced}, true, nil
				}
			}
			return kindInfo{}, false, nil
		},
		get: func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error) {
			client, err := c.meta.For(cluster)
			if err != nil {
				return nil, err
			}
			return client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		},
	}
	return &collector{
		objectByUID:  monitors.objectByUID,
		dependentsOf: monitors.dependentsOf,
		getOwner:     lookup.getOwner,
		get: func(ctx context.Context, cluster logicalcluster.Name, obj object) (*metav1.PartialObjectMetadata, error) {
			return lookup.get(ctx, cluster, obj.resource, obj.meta.Namespace, obj.meta.Name)
		},
		delete: func(ctx context.Context, cluster logicalcluster.Name, obj object, uid types.UID, policy metav1.DeletionPropagation) error {
			client, err := c.meta.For(cluster)
			if err != nil {
				return err
			}
			return client.Resource(obj.resource).Namespace(obj.meta.Namespace).Delete(ctx, obj.meta.Name, metav1.DeleteOptions{
				Preconditions:     &metav1.Preconditions{UID: ptr.To(uid)},
				PropagationPolicy: ptr.To(policy),
			})
		},
		patch: func(ctx context.Context, cluster logicalcluster.Name, obj object, patch []byte) error {
			client, err := c.meta.For(cluster)
			if err != nil {
				return err
			}
			_, err = client.Resource(obj.resource).Namespace(obj.meta.Namespace).Patch(ctx, obj.meta.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	}
}

// newResourceSync wires the monitor management of custom resources to the
// shared CRD informer.
func (c *Controller) newResourceSync(monitors *monitorSet, b *builtins) *resourceSync {
	return &resourceSync{
		crdsNamed: func(name string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
			objs, err := c.crds.Informer().GetIndexer().ByIndex(crdNameIndex, name)
			if err != nil {
				return nil, err
			}
			out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
			for _, obj := range objs {
				if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
					out = append(out, crd)
				}
			}
			if len(out) == 0 && c.boundNamed != nil {
				out = c.boundNamed(name)
			}
			return out, nil
		},
		isBuiltin:        b.has,
		monitoredVersion: monitors.version,
		ensure: func(gvr schema.GroupVersionResource) error {
			_, err := monitors.ensure(gvr)
			return err
		},
		remove: monitors.remove,
	}
}
