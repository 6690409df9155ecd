package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Plugin names, as kube-apiserver's.
const (
	MutatingPluginName   = mutating.PluginName
	ValidatingPluginName = validating.PluginName
)

// readyTimeout is how long a request waits for the shard's informers to
// sync before it is refused, as upstream's plugins wait.
const readyTimeout = 10 * time.Second

// excludedResources are the virtual resources no webhook sees, as in
// kube-apiserver: reviews are answered, not stored, and a webhook must not
// be able to lock a cluster out of its own authentication and authorization.
var excludedResources = []schema.GroupResource{
	authenticationv1.Resource("tokenreviews"),
	authenticationv1.Resource("selfsubjectreviews"),
	authorizationv1.Resource("subjectaccessreviews"),
	authorizationv1.Resource("localsubjectaccessreviews"),
	authorizationv1.Resource("selfsubjectaccessreviews"),
	authorizationv1.Resource("selfsubjectrulesreviews"),
}

// Dependencies are what the plugins read: the shard's shared informers,
// per-cluster clients (namespace lookups the informer has not seen yet),
// the shard's authorizer (the authorizer variable of matchConditions) and
// the channel closed when the shard drains.
type Dependencies struct {
	Namespaces informers.Informer[*corev1.Namespace]
	Clients    *clusters.ClusterClientset
	Authorizer authorizer.Authorizer
	Drained    <-chan struct{}
	// FeatureGates defaults to utilfeature.DefaultFeatureGate.
	FeatureGates featuregate.FeatureGate
	// MaxClusters bounds the clusters whose plugins are kept; zero means
	// DefaultMaxClusters.
	MaxClusters int
}

// upstream is what the shard needs of k8s.io/apiserver's webhook plugins.
type upstream interface {
	admission.InitializationValidator
	SetExternalKubeClientSet(kubernetes.Interface)
	SetExternalKubeInformerFactory(clientinformers.SharedInformerFactory)
	SetDrainedNotification(<-chan struct{})
	SetServiceResolver(webhookutil.ServiceResolver)
	SetUnconditionalAuthorizer(authorizer.UnconditionalAuthorizer)
	SetExcludedAdmissionResources([]schema.GroupResource)
	InspectFeatureGates(featuregate.FeatureGate)
}

// NewMutating returns the MutatingAdmissionWebhook plugin of a shard over
// the shared informer of MutatingWebhookConfigurations.
func NewMutating(configs informers.Informer[*admissionregistrationv1.MutatingWebhookConfiguration], deps Dependencies) (*Mutating, error) {
	d, err := newDispatcher(MutatingPluginName, configs, deps, func(v *clusterView) {
		v.mutating = configs.Lister().Cluster(v.cluster)
	}, func() (upstream, admission.Interface, error) {
		p, err := mutating.NewMutatingWebhook(nil)
		return p, p, err
	})
	if err != nil {
		return nil, err
	}
	return &Mutating{d}, nil
}

// NewValidating returns the ValidatingAdmissionWebhook plugin of a shard
// over the shared informer of ValidatingWebhookConfigurations.
func NewValidating(configs informers.Informer[*admissionregistrationv1.ValidatingWebhookConfiguration], deps Dependencies) (*Validating, error) {
	d, err := newDispatcher(ValidatingPluginName, configs, deps, func(v *clusterView) {
		v.validating = configs.Lister().Cluster(v.cluster)
	}, func() (upstream, admission.Interface, error) {
		p, err := validating.NewValidatingAdmissionWebhook(nil)
		return p, p, err
	})
	if err != nil {
		return nil, err
	}
	return &Validating{d}, nil
}

// Mutating calls the mutating webhooks of the request's logical cluster.
type Mutating struct{ *dispatcher }

var _ admission.MutationInterface = &Mutating{}

// Admit implements admission.MutationInterface.
func (m *Mutating) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	p, err := m.pluginFor(ctx, a)
	if p == nil || err != nil {
		return err
	}
	return p.(admission.MutationInterface).Admit(ctx, a, o)
}

// Validating calls the validating webhooks of the request's logical
// cluster.
type Validating struct{ *dispatcher }

var _ admission.ValidationInterface = &Validating{}

// Validate implements admission.ValidationInterface.
func (v *Validating) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	p, err := v.pluginFor(ctx, a)
	if p == nil || err != nil {
		return err
	}
	return p.(admission.ValidationInterface).Validate(ctx, a, o)
}

// DefaultMaxClusters bounds the upstream plugins a dispatcher keeps.
// Each costs about 430 KiB, mostly the CEL environments upstream builds
// for matchConditions, and about 4 ms to build; the least recently used
// is dropped, and built again when its cluster is next written to.
const DefaultMaxClusters = 64

// dispatcher holds the upstream plugins of the logical clusters that have
// configurations of its kind and were written to recently.
type dispatcher struct {
	*admission.Handler
	name       string
	deps       Dependencies
	configs    cache.SharedIndexInformer
	hasConfigs func(logicalcluster.Name) bool
	setLister  func(*clusterView)
	newPlugin  func() (upstream, admission.Interface, error)
	handlerReg cache.ResourceEventHandlerRegistration

	// plugins holds a *clusterPlugin per logical cluster, least recently
	// used dropped first.
	plugins *lru.Cache
}

// clusterPlugin is the upstream plugin of one logical cluster.
type clusterPlugin struct {
	plugin admission.Interface
	// handlers are the plugin's event handlers. They are registered while
	// the plugin is built, before it is shared.
	handlers []cache.ResourceEventHandler
}

func newDispatcher[T runtime.Object](name string, configs informers.Informer[T], deps Dependencies, setLister func(*clusterView), newPlugin func() (upstream, admission.Interface, error)) (*dispatcher, error) {
	if deps.Namespaces.Informer() == nil || deps.Clients == nil || deps.Authorizer == nil || deps.Drained == nil {
		return nil, fmt.Errorf("%s admission plugin: missing dependencies", name)
	}
	if deps.FeatureGates == nil {
		deps.FeatureGates = utilfeature.DefaultFeatureGate
	}
	if deps.MaxClusters <= 0 {
		deps.MaxClusters = DefaultMaxClusters
	}
	d := &dispatcher{
		Handler:   admission.NewHandler(admission.Connect, admission.Create, admission.Delete, admission.Update),
		name:      name,
		deps:      deps,
		configs:   configs.Informer(),
		setLister: setLister,
		newPlugin: newPlugin,
		plugins:   lru.New(deps.MaxClusters),
		hasConfigs: func(cluster logicalcluster.Name) bool {
			objs, err := configs.Lister().Cluster(cluster).List(labels.Everything())
			return err != nil || len(objs) > 0
		},
	}
	reg, err := d.configs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { d.forward(obj, func(h cache.ResourceEventHandler) { h.OnAdd(obj, false) }) },
		UpdateFunc: func(oldObj, newObj any) {
			d.forward(newObj, func(h cache.ResourceEventHandler) { h.OnUpdate(oldObj, newObj) })
		},
		DeleteFunc: func(obj any) { d.forward(obj, func(h cache.ResourceEventHandler) { h.OnDelete(obj) }) },
	})
	if err != nil {
		return nil, fmt.Errorf("%s admission plugin: %w", name, err)
	}
	d.handlerReg = reg
	d.SetReadyFunc(func() bool { return reg.HasSynced() && deps.Namespaces.Informer().HasSynced() })
	return d, nil
}

// pluginFor returns the upstream plugin of the request's cluster, nil if
// the cluster has no configurations, or a Forbidden error while the
// shard's informers sync or if the plugin cannot be built.
func (d *dispatcher) pluginFor(ctx context.Context, a admission.Attributes) (admission.Interface, error) {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard {
		// Admission runs for writes, which always name a cluster.
		return nil, admission.NewForbidden(a, errors.New("admission webhooks need the request's logical cluster"))
	}
	if !d.WaitForReady() {
		return nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	if !d.hasConfigs(c.Name) {
		return nil, nil
	}
	if p, ok := d.plugins.Get(c.Name); ok {
		return p.(*clusterPlugin).plugin, nil
	}
	// The new plugin reads the configurations when it is first used, after
	// it is in d.plugins and receives events, so none is missed. Two
	// requests may build one each; the later replaces the earlier.
	p, err := d.build(c.Name)
	if err != nil {
		klog.ErrorS(err, "building the admission webhook plugin of a logical cluster", "plugin", d.name, "cluster", c.Name)
		return nil, admission.NewForbidden(a, fmt.Errorf("%s: %w", d.name, err))
	}
	d.plugins.Add(c.Name, p)
	return p.plugin, nil
}

// forward passes an event of obj's cluster to that cluster's plugin.
func (d *dispatcher) forward(obj any, call func(cache.ResourceEventHandler)) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	o, ok := obj.(logicalcluster.Object)
	if !ok {
		return
	}
	p, ok := d.plugins.Get(logicalcluster.From(o))
	if !ok {
		return
	}
	for _, h := range p.(*clusterPlugin).handlers {
		call(h)
	}
}

func (d *dispatcher) build(cluster logicalcluster.Name) (*clusterPlugin, error) {
	client, err := d.deps.Clients.For(cluster)
	if err != nil {
		return nil, err
	}
	up, plugin, err := d.newPlugin()
	if err != nil {
		return nil, err
	}
	p := &clusterPlugin{plugin: plugin}
	view := &clusterView{
		cluster:       cluster,
		namespaces:    d.deps.Namespaces.Lister().Cluster(cluster),
		nsSynced:      d.deps.Namespaces.Informer(),
		configsSynced: d.handlerReg,
		handlers:      &p.handlers,
	}
	d.setLister(view)
	up.InspectFeatureGates(d.deps.FeatureGates)
	up.SetExcludedAdmissionResources(excludedResources)
	up.SetDrainedNotification(d.deps.Drained)
	up.SetExternalKubeClientSet(client)
	up.SetServiceResolver(noServices{})
	up.SetUnconditionalAuthorizer(d.deps.Authorizer)
	up.SetExternalKubeInformerFactory(view)
	if err := up.ValidateInitialization(); err != nil {
		return nil, err
	}
	if len(p.handlers) == 0 {
		return nil, fmt.Errorf("the upstream %s plugin registered no event handler", d.name)
	}
	return p, nil
}

// noServices refuses webhooks that name a Service: logical clusters have
// none. Such configurations are refused when written; this covers ones
// stored before that.
type noServices struct{}

func (noServices) ResolveEndpoint(namespace, name string, _ int32) (*url.URL, error) {
	return nil, fmt.Errorf("webhook service %s/%s: logical clusters have no Services; use clientConfig.url", namespace, name)
}
