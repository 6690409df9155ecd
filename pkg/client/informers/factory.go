package informers

import (
	"context"
	"sync"
	"time"

	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// Clients are the wildcard clients (for /clusters/*) a SharedInformerFactory
// lists and watches with; see clusters.Cache.Wildcard. Only the clients of
// the informers asked for are needed.
type Clients struct {
	// Kubernetes serves the built-in types: core and RBAC.
	Kubernetes kubernetes.Interface
	// APIExtensions serves CustomResourceDefinitions.
	APIExtensions apiextensionsclientset.Interface
	// Dynamic serves ForResource.
	Dynamic dynamic.Interface
	// KCP serves the kcp API groups (core, tenancy, apis and topology.kcp.io).
	KCP *kcpclient.Clientset
}

// TweakListOptionsFunc changes the options of every list and watch request,
// for example to add a label selector.
type TweakListOptionsFunc func(*metav1.ListOptions)

// Option configures a SharedInformerFactory.
type Option func(*SharedInformerFactory)

// WithTweakListOptions applies tweak to every list and watch request of the
// factory's informers.
func WithTweakListOptions(tweak TweakListOptionsFunc) Option {
	return func(f *SharedInformerFactory) { f.tweak = tweak }
}

// WithTransform applies transform to every object before the factory's
// informers store it, e.g. StripManagedFields to save memory.
func WithTransform(transform cache.TransformFunc) Option {
	return func(f *SharedInformerFactory) { f.transform = transform }
}

// SharedInformerFactory hands out shared wildcard informers: one per
// resource (and per typed or unstructured flavour) for all logical clusters
// of the shard, however often it is asked.
type SharedInformerFactory struct {
	clients   Clients
	resync    time.Duration
	tweak     TweakListOptionsFunc
	transform cache.TransformFunc

	mu           sync.Mutex
	informers    map[informerKey]cache.SharedIndexInformer
	started      map[informerKey]bool
	shuttingDown bool
	wg           sync.WaitGroup
}

// informerKey tells the informers of a factory apart: a typed and an
// unstructured informer of one resource are different informers.
type informerKey struct {
	resource     schema.GroupVersionResource
	unstructured bool
}

// String describes the informer's objects in logs.
func (k informerKey) String() string {
	if k.unstructured {
		return "unstructured " + k.resource.String()
	}
	return k.resource.String()
}

// NewSharedInformerFactory returns a factory whose informers list and watch
// with clients and resync every resync (zero: never).
func NewSharedInformerFactory(clients Clients, resync time.Duration, opts ...Option) *SharedInformerFactory {
	f := &SharedInformerFactory{
		clients:   clients,
		resync:    resync,
		informers: map[informerKey]cache.SharedIndexInformer{},
		started:   map[informerKey]bool{},
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Start runs every informer asked for so far and not yet started, until ctx
// is done. Informers asked for later need another Start.
func (f *SharedInformerFactory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for key, informer := range f.informers {
		if f.started[key] {
			continue
		}
		f.started[key] = true
		f.wg.Go(func() { informer.RunWithContext(ctx) })
	}
}

// WaitForCacheSync waits until every started informer has synced or ctx is
// done, and tells per resource whether it synced.
func (f *SharedInformerFactory) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool {
	f.mu.Lock()
	started := map[informerKey]cache.SharedIndexInformer{}
	for key, informer := range f.informers {
		if f.started[key] {
			started[key] = informer
		}
	}
	f.mu.Unlock()

	res := map[schema.GroupVersionResource]bool{}
	for key, informer := range started {
		synced := cache.WaitFor(ctx, "", informer.HasSyncedChecker())
		if prev, ok := res[key.resource]; ok {
			synced = synced && prev
		}
		res[key.resource] = synced
	}
	return res
}

// Shutdown waits for the informers started by Start to stop; their context
// must be done or be cancelled by another goroutine. Start does nothing
// afterwards.
func (f *SharedInformerFactory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	f.mu.Unlock()
	f.wg.Wait()
}

// informerFor returns the factory's informer for key, built on first use
// from lw and exampleObject.
func (f *SharedInformerFactory) informerFor(key informerKey, exampleObject runtime.Object, lw func() cache.ListerWatcher) cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if informer, ok := f.informers[key]; ok {
		return informer
	}
	informer := NewSharedIndexInformerWithOptions(lw(), exampleObject, cache.SharedIndexInformerOptions{
		ResyncPeriod:      f.resync,
		ObjectDescription: key.String(),
	})
	if f.transform != nil {
		// Cannot fail: the informer has not started.
		_ = informer.SetTransform(f.transform)
	}
	f.informers[key] = informer
	return informer
}

// listWatcher is what typed clients offer for a wildcard list and watch.
type listWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// newListWatch adapts a typed client, applying the factory's tweak.
func newListWatch[L runtime.Object](client listWatcher[L], tweak TweakListOptionsFunc) cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return client.Watch(ctx, opts)
		},
	}
}

// typedInformer returns the factory's informer of T for resource, listing
// and watching with the client that client returns. The lister's NotFound
// errors name notFound.
func typedInformer[T runtime.Object, L runtime.Object](f *SharedInformerFactory, resource schema.GroupVersionResource, notFound schema.GroupResource, exampleObject T, client func() listWatcher[L]) Informer[T] {
	informer := f.informerFor(informerKey{resource: resource}, exampleObject, func() cache.ListerWatcher {
		return newListWatch(client(), f.tweak)
	})
	return NewInformer[T](informer, notFound)
}
