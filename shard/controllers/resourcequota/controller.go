// Package resourcequota keeps status.used of the ResourceQuotas of every
// logical cluster of a shard current, with one controller per shard.
//
// A quota's usage is computed with k8s.io/apiserver's quota package
// (CalculateUsage over object count evaluators), counting objects with a
// metadata-only LIST in the quota's cluster and namespace. A quota is
// recounted when its spec.hard changes, when the quota admission plugin
// admits a deletion in its namespace (Replenish: objects are counted up at
// admission and down here), and every resync period.
package resourcequota

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/registry/builtin"
	"github.com/tessera-dev/tessera/shard/registry/core/resourcequotas"
)

const (
	// ControllerName names the controller in logs and its user agent.
	ControllerName = "tessera-resourcequota"
	// DefaultResync is how often every quota is recounted, as
	// kube-controller-manager's --resource-quota-sync-period.
	DefaultResync = 5 * time.Minute
	// replenishDelay lets an admitted deletion reach storage before the
	// namespace's quotas are recounted.
	replenishDelay = time.Second
)

// Controller recounts ResourceQuotas.
type Controller struct {
	ctrl   *reconciler.Controller
	quotas informers.Informer[*corev1.ResourceQuota]
	resync time.Duration
}

// New returns the controller of the shard whose admin loopback config is
// loopback, reading quotas and CRDs from f. Start f after New.
func New(loopback *rest.Config, f *informers.SharedInformerFactory) (*Controller, error) {
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
	c := &Controller{quotas: f.ResourceQuotas(), resync: DefaultResync}
	crds := f.CustomResourceDefinitions()
	r := &recounter{
		quotas: c.quotas.Lister(),
		count:  newCounter(builtinVersions(), crds.Lister(), meta).list,
		updateStatus: func(ctx context.Context, cluster logicalcluster.Name, q *corev1.ResourceQuota) error {
			client, err := kube.For(cluster)
			if err != nil {
				return err
			}
			_, err = client.CoreV1().ResourceQuotas(q.Namespace).UpdateStatus(ctx, q, metav1.UpdateOptions{})
			return err
		},
	}
	c.ctrl = reconciler.New(ControllerName, r, reconciler.Options{Workers: 2})
	if err := c.ctrl.Watch(c.quotas.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc: c.ctrl.EnqueueObject,
		UpdateFunc: func(_, obj any) {
			if q, ok := obj.(*corev1.ResourceQuota); ok && needsRecount(q) {
				c.ctrl.EnqueueObject(q)
			}
		},
	}); err != nil {
		return nil, err
	}
	c.ctrl.WaitFor(crds.Informer().HasSynced)
	return c, nil
}

// needsRecount reports whether status.hard does not reflect spec.hard yet.
func needsRecount(q *corev1.ResourceQuota) bool {
	return !equality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard)
}

// Name returns the controller's name.
func (c *Controller) Name() string { return ControllerName }

// Run reconciles until ctx is done, recounting every quota each resync
// period.
func (c *Controller) Run(ctx context.Context) error {
	go func() {
		t := time.NewTicker(c.resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				qs, _ := c.quotas.Lister().List(labels.Everything())
				for _, q := range qs {
					c.ctrl.EnqueueObject(q)
				}
			}
		}
	}()
	return c.ctrl.Run(ctx)
}

// Replenish recounts the quotas of a namespace soon: an object in it is
// being deleted. Namespaces without quotas cost one index lookup.
func (c *Controller) Replenish(cluster logicalcluster.Name, namespace string) {
	qs, err := c.quotas.Lister().Cluster(cluster).Namespace(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range qs {
		c.ctrl.EnqueueAfter(reconciler.Key{Cluster: cluster, Namespace: namespace, Name: q.Name}, replenishDelay)
	}
}

// recounter is the controller's reconciler.
type recounter struct {
	quotas       informers.Lister[*corev1.ResourceQuota]
	count        func(ctx context.Context, cluster logicalcluster.Name, gr schema.GroupResource, namespace string) ([]runtime.Object, error)
	updateStatus func(ctx context.Context, cluster logicalcluster.Name, q *corev1.ResourceQuota) error

	// lowered holds the quotas whose last count was below their
	// status.used. Admission charges a quota before the object it admits
	// is stored, so a count can miss an object in flight; a lower count is
	// written only when a second count, replenishDelay later, agrees.
	mu      sync.Mutex
	lowered map[reconciler.Key]bool
}

// lowers tells whether used is below old for some resource.
func lowers(used, old corev1.ResourceList) bool {
	for name, v := range used {
		if o, ok := old[name]; ok && v.Cmp(o) < 0 {
			return true
		}
	}
	return false
}

// Reconcile recounts one quota and writes its status if it changed.
func (r *recounter) Reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	q, err := r.quotas.Cluster(key.Cluster).Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	status, err := r.usage(ctx, key.Cluster, q)
	if err != nil {
		return reconciler.Result{}, err
	}
	if equality.Semantic.DeepEqual(status, q.Status) {
		r.confirmLower(key, false)
		return reconciler.Result{}, nil
	}
	if lower := lowers(status.Used, q.Status.Used); r.confirmLower(key, lower) != lower {
		return reconciler.Result{RequeueAfter: replenishDelay}, nil
	}
	updated := q.DeepCopy()
	updated.Status = status
	if err := r.updateStatus(ctx, key.Cluster, updated); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// A newer quota (or none) is on its way through the informer.
			return reconciler.Result{RequeueAfter: replenishDelay}, nil
		}
		return reconciler.Result{}, err
	}
	return reconciler.Result{}, nil
}

// confirmLower records whether the last count of key was lower than its
// status, and tells whether the count before was lower too.
func (r *recounter) confirmLower(key reconciler.Key, lower bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := r.lowered[key]
	if !lower || before {
		delete(r.lowered, key)
		return before && lower
	}
	if r.lowered == nil {
		r.lowered = map[reconciler.Key]bool{}
	}
	r.lowered[key] = true
	return false
}

// usage computes the status of q the way kube-controller-manager's quota
// controller does: spec.hard as status.hard, and status.used for each hard
// resource, counted now where an evaluator knows how, kept otherwise.
func (r *recounter) usage(ctx context.Context, cluster logicalcluster.Name, q *corev1.ResourceQuota) (corev1.ResourceQuotaStatus, error) {
	var evaluators []quota.Evaluator
	for name := range q.Spec.Hard {
		gr, alias, ok := countedResource(name)
		if !ok {
			continue
		}
		evaluators = append(evaluators, generic.NewObjectCountEvaluator(gr, func(namespace string) ([]runtime.Object, error) {
			return r.count(ctx, cluster, gr, namespace)
		}, alias))
	}
	used := corev1.ResourceList{}
	for name, v := range q.Status.Used {
		used[name] = v
	}
	newUsage, err := quota.CalculateUsage(q.Namespace, q.Spec.Scopes, q.Spec.Hard, generic.NewRegistry(evaluators), q.Spec.ScopeSelector)
	if err != nil {
		return corev1.ResourceQuotaStatus{}, err
	}
	for name, v := range newUsage {
		used[name] = v
	}
	return corev1.ResourceQuotaStatus{
		Hard: q.Spec.Hard.DeepCopy(),
		Used: quota.Mask(used, quota.ResourceNames(q.Spec.Hard)),
	}, nil
}

// countedResource returns the resource a quota name counts, and its legacy
// alias if name is one (configmaps for count/configmaps).
func countedResource(name corev1.ResourceName) (schema.GroupResource, corev1.ResourceName, bool) {
	for gr, alias := range resourcequotas.ObjectCountAliases {
		if name == alias || name == generic.ObjectCountQuotaResourceNameFor(gr) {
			return gr, alias, true
		}
	}
	rest, ok := strings.CutPrefix(string(name), resourcequotas.CountPrefix)
	if !ok || rest == "" {
		return schema.GroupResource{}, "", false
	}
	resource, group, _ := strings.Cut(rest, ".")
	return schema.GroupResource{Group: group, Resource: resource}, "", true
}

// builtinVersions maps each built-in resource to the version it is served
// in.
func builtinVersions() map[schema.GroupResource]schema.GroupVersionResource {
	out := map[schema.GroupResource]schema.GroupVersionResource{}
	for _, r := range builtin.Resources() {
		gvr := r.GroupVersion.WithResource(r.Resource)
		out[gvr.GroupResource()] = gvr
	}
	return out
}

// counter lists the objects of a resource in a namespace of a logical
// cluster, as metadata.
type counter struct {
	builtins map[schema.GroupResource]schema.GroupVersionResource
	crds     informers.Lister[*apiextensionsv1.CustomResourceDefinition]
	meta     *clusters.Cache[metadata.Interface]
}

func newCounter(builtins map[schema.GroupResource]schema.GroupVersionResource, crds informers.Lister[*apiextensionsv1.CustomResourceDefinition], meta *clusters.Cache[metadata.Interface]) *counter {
	return &counter{builtins: builtins, crds: crds, meta: meta}
}

// list returns the objects of gr in namespace of cluster; none if the
// cluster does not serve gr.
func (c *counter) list(ctx context.Context, cluster logicalcluster.Name, gr schema.GroupResource, namespace string) ([]runtime.Object, error) {
	gvr, ok := c.builtins[gr]
	if !ok {
		crd, err := c.crds.Cluster(cluster).Get(gr.String())
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		version, ok := servedVersion(crd)
		if !ok || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
			return nil, nil
		}
		gvr = gr.WithVersion(version)
	}
	client, err := c.meta.For(cluster)
	if err != nil {
		return nil, err
	}
	// A consistent list (served by the watch cache once it has caught up
	// with etcd): with resourceVersion 0 a recount could miss an object
	// created just before the quota, and nothing would count it again.
	list, err := client.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// servedVersion returns the storage version of an established CRD if it
// is served, or else its first served version.
func servedVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, bool) {
	first := ""
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Storage {
			return v.Name, true
		}
		if first == "" {
			first = v.Name
		}
	}
	return first, first != ""
}
