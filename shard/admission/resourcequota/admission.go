// Package resourcequota enforces the ResourceQuotas of each logical
// cluster with k8s.io/apiserver's quota evaluator (the ResourceQuota
// admission plugin's), one per shard.
//
// Upstream's evaluator batches requests by namespace and reads and writes
// quotas through a QuotaAccessor that knows namespaces only. The plugin
// hands it attributes whose namespace is the key cluster|namespace, and an
// accessor that reads that cluster's quotas from the shard's shared
// informer (and the API server when the informer has none yet) and writes
// status through the cluster's client. The namespace is only a batching
// key to the evaluator: objects reach it with their own namespace set, and
// Forbidden errors name the resource and object, not the namespace.
package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/admission"
	upstream "k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	resourcequotaapi "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/core/resourcequotas"
)

// PluginName is the plugin's name, as kube-apiserver's.
const PluginName = "ResourceQuota"

const (
	// workers evaluate batches of requests, as kube-apiserver's default.
	workers = 5
	// liveLookupTTL is how long an API server lookup of the quotas of a
	// namespace the informer knew none of is trusted, as upstream's.
	liveLookupTTL = 30 * time.Second
	// cacheEntries bounds the live lookups and the quota writes the
	// accessor remembers.
	cacheEntries = 4096
)

// ignoredResources are never counted, as in Kubernetes.
var ignoredResources = map[schema.GroupResource]struct{}{
	{Group: "", Resource: "events"}: {},
}

// Dependencies are what the plugin reads and writes.
type Dependencies struct {
	Quotas  informers.Informer[*corev1.ResourceQuota]
	Clients *clusters.ClusterClientset
	// Replenish is told of deletions in a namespace, whose quotas are
	// then recounted.
	Replenish func(cluster logicalcluster.Name, namespace string)
	// Count, when set, counts the quotas of a namespace in storage with a
	// linearizable read. When the informer has no quota for a namespace,
	// a count of zero settles it without the API server lookup upstream
	// makes (a LIST through the whole handler chain, which waits for the
	// watch cache to be fresh), and without remembering anything per
	// namespace. Only namespaces that do have quotas the informer has not
	// seen yet are listed.
	Count func(ctx context.Context, cluster logicalcluster.Name, namespace string) (int64, error)
	Stop  <-chan struct{}
}

// Plugin is the ResourceQuota admission plugin of a shard.
type Plugin struct {
	*admission.Handler
	evaluator upstream.Evaluator
	accessor  *accessor
	quotas    informers.Informer[*corev1.ResourceQuota]
	replenish func(logicalcluster.Name, string)
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New(deps Dependencies) (*Plugin, error) {
	if deps.Quotas.Informer() == nil || deps.Clients == nil || deps.Replenish == nil || deps.Stop == nil {
		return nil, errors.New("ResourceQuota admission plugin: missing dependencies")
	}
	acc := &accessor{
		quotas:  deps.Quotas.Lister(),
		clients: deps.Clients,
		count:   deps.Count,
		live:    utilcache.NewLRUExpireCache(cacheEntries),
		written: utilcache.NewLRUExpireCache(cacheEntries),
	}
	var evaluators []quota.Evaluator
	for gr, alias := range resourcequotas.ObjectCountAliases {
		evaluators = append(evaluators, generic.NewObjectCountEvaluator(gr, nil, alias))
	}
	p := &Plugin{
		Handler:   admission.NewHandler(admission.Create, admission.Update, admission.Delete),
		evaluator: upstream.NewQuotaEvaluator(acc, ignoredResources, generic.NewRegistry(evaluators), nil, &resourcequotaapi.Configuration{}, workers, deps.Stop),
		accessor:  acc,
		quotas:    deps.Quotas,
		replenish: deps.Replenish,
	}
	p.SetReadyFunc(deps.Quotas.Informer().HasSynced)
	return p, nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	// As upstream: cluster-scoped objects and namespaces are not counted.
	if a.GetNamespace() == "" || (a.GetOperation() == admission.Create && a.GetKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind()) {
		return nil
	}
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard {
		return admission.NewForbidden(a, errors.New("resource quota needs the request's logical cluster"))
	}
	if a.GetOperation() == admission.Delete {
		p.replenish(c.Name, a.GetNamespace())
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	attrs := &clusterAttributes{Attributes: a, key: key(c.Name, a.GetNamespace())}
	err := p.evaluator.Evaluate(attrs)
	if err == nil || !(apierrors.IsForbidden(err) || apierrors.IsConflict(err)) {
		return err
	}
	// The evaluator reads quotas from the shard's informer, which may not
	// have seen the quota controller's last recount yet (a deletion that
	// freed the quota) or its last write (a conflict on every retry).
	// Refusals are rare: decide again on the quotas as the API server has
	// them now, rather than refuse on stale usage.
	if ferr := p.accessor.refresh(ctx, c.Name, a.GetNamespace()); ferr != nil {
		return err
	}
	return p.evaluator.Evaluate(attrs)
}

// clusterAttributes gives the evaluator cluster|namespace as namespace.
type clusterAttributes struct {
	admission.Attributes
	key string
}

func (a *clusterAttributes) GetNamespace() string { return a.key }

func key(cluster logicalcluster.Name, namespace string) string {
	return string(cluster) + "|" + namespace
}

func splitKey(k string) (logicalcluster.Name, string, error) {
	cluster, namespace, ok := strings.Cut(k, "|")
	if !ok || cluster == "" || namespace == "" {
		return "", "", fmt.Errorf("resource quota: %q is not cluster|namespace", k)
	}
	return logicalcluster.Name(cluster), namespace, nil
}

// accessor reads and writes the quotas of cluster|namespace keys.
type accessor struct {
	quotas  informers.Lister[*corev1.ResourceQuota]
	clients *clusters.ClusterClientset
	count   func(ctx context.Context, cluster logicalcluster.Name, namespace string) (int64, error)
	// live holds the quotas the API server had for a key the informer
	// had none for.
	live *utilcache.LRUExpireCache
	// written holds the quotas the evaluator wrote, by cluster|ns/name,
	// until the informer has caught up.
	written *utilcache.LRUExpireCache
}

var _ upstream.QuotaAccessor = &accessor{}

// GetQuotas implements upstream.QuotaAccessor.
func (a *accessor) GetQuotas(k string) ([]corev1.ResourceQuota, error) {
	cluster, namespace, err := splitKey(k)
	if err != nil {
		return nil, err
	}
	items, err := a.quotas.Cluster(cluster).Namespace(namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing the quotas of %s: %w", k, err)
	}
	if len(items) == 0 && a.count != nil {
		n, err := a.count(context.TODO(), cluster, namespace)
		if err != nil {
			return nil, fmt.Errorf("counting the quotas of %s: %w", k, err)
		}
		if n == 0 {
			return nil, nil
		}
	}
	if len(items) == 0 {
		if cached, ok := a.live.Get(k); ok {
			items = cached.([]*corev1.ResourceQuota)
		} else {
			client, err := a.clients.For(cluster)
			if err != nil {
				return nil, err
			}
			list, err := client.CoreV1().ResourceQuotas(namespace).List(context.TODO(), metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing the quotas of %s: %w", k, err)
			}
			items = make([]*corev1.ResourceQuota, len(list.Items))
			for i := range list.Items {
				items[i] = &list.Items[i]
			}
			a.live.Add(k, items, liveLookupTTL)
		}
	}
	out := make([]corev1.ResourceQuota, 0, len(items))
	for _, q := range items {
		out = append(out, *a.newest(cluster, q))
	}
	return out, nil
}

// newest returns q, or the version of q the evaluator wrote last if that
// is newer.
func (a *accessor) newest(cluster logicalcluster.Name, q *corev1.ResourceQuota) *corev1.ResourceQuota {
	w, ok := a.written.Get(informers.ToKey(cluster, q.Namespace, q.Name))
	if !ok {
		return q
	}
	mine := w.(*corev1.ResourceQuota)
	if mine.UID == q.UID && newer(mine.ResourceVersion, q.ResourceVersion) {
		return mine
	}
	return q
}

func newer(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x > y
}

// refresh reads the quotas of a namespace from the API server and keeps
// them as the newest the accessor knows, until the informer catches up.
func (a *accessor) refresh(ctx context.Context, cluster logicalcluster.Name, namespace string) error {
	client, err := a.clients.For(cluster)
	if err != nil {
		return err
	}
	list, err := client.CoreV1().ResourceQuotas(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	items := make([]*corev1.ResourceQuota, len(list.Items))
	for i := range list.Items {
		q := &list.Items[i]
		items[i] = q
		a.written.Add(informers.ToKey(cluster, q.Namespace, q.Name), q, liveLookupTTL)
	}
	a.live.Add(key(cluster, namespace), items, liveLookupTTL)
	return nil
}

// UpdateQuotaStatus implements upstream.QuotaAccessor.
func (a *accessor) UpdateQuotaStatus(q *corev1.ResourceQuota) error {
	cluster := logicalcluster.From(q)
	if cluster.Empty() {
		return apierrors.NewInternalError(fmt.Errorf("quota %s/%s has no logical cluster", q.Namespace, q.Name))
	}
	client, err := a.clients.For(cluster)
	if err != nil {
		return err
	}
	updated, err := client.CoreV1().ResourceQuotas(q.Namespace).UpdateStatus(context.TODO(), q, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	a.written.Add(informers.ToKey(cluster, updated.Namespace, updated.Name), updated, liveLookupTTL)
	return nil
}
