package namespacelifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const (
	// PluginName is the name of the plugin in the admission chain, the
	// same as upstream's.
	PluginName = "NamespaceLifecycle"

	// DefaultLiveLookupEntries bounds the namespaces, over all logical
	// clusters, whose deletion the plugin remembers in order to look them
	// up live.
	DefaultLiveLookupEntries = 1024

	// liveLookupTTL is how long a namespace whose deletion was admitted is
	// looked up live while the cache still shows it active.
	liveLookupTTL = 30 * time.Second
)

var (
	namespaceKind      = corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind()
	namespacesResource = corev1.Resource("namespaces")
)

// isImmortal tells whether a namespace may not be deleted while its logical
// cluster lives, as in kcp.
func isImmortal(namespace string) bool {
	switch namespace {
	case metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic:
		return true
	}
	return false
}

// isAccessReview tells whether a resource gives a view into permissions in
// a namespace. Refusing it for missing namespaces would tell anyone who
// may probe which namespaces exist.
func isAccessReview(gr schema.GroupResource) bool {
	return gr == schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}
}

// Dependencies are what the plugin looks namespaces and logical clusters up
// with.
type Dependencies struct {
	// GetNamespace returns a namespace of a logical cluster from a cache,
	// or a NotFound error.
	GetNamespace func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error)
	// GetLiveNamespace returns a namespace of a logical cluster from the
	// API server, or a NotFound error.
	GetLiveNamespace func(ctx context.Context, cluster logicalcluster.Name, name string) (*corev1.Namespace, error)
	// ClusterDeleting tells whether a logical cluster is being deleted.
	ClusterDeleting func(cluster logicalcluster.Name) (bool, error)
	// Ready tells whether the caches behind GetNamespace and
	// ClusterDeleting have synced; nil means always.
	Ready func() bool
}

// Plugin is the NamespaceLifecycle admission plugin for a shard. It is safe
// for concurrent use.
type Plugin struct {
	*admission.Handler
	deps Dependencies
	// liveLookup holds cluster|namespace keys of namespaces whose deletion
	// was admitted recently; the cache may not show them terminating yet.
	// Cache audit (issue 9): cluster-keyed: cluster|namespace.
	liveLookup *utilcache.LRUExpireCache
}

var (
	_ admission.ValidationInterface     = &Plugin{}
	_ admission.InitializationValidator = &Plugin{}
)

// New returns the plugin over deps.
func New(deps Dependencies) *Plugin {
	return newWithClock(deps, clock.RealClock{})
}

func newWithClock(deps Dependencies, c clock.Clock) *Plugin {
	p := &Plugin{
		Handler:    admission.NewHandler(admission.Create, admission.Delete),
		deps:       deps,
		liveLookup: utilcache.NewLRUExpireCacheWithClock(DefaultLiveLookupEntries, c),
	}
	if deps.Ready != nil {
		p.SetReadyFunc(deps.Ready)
	}
	return p
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	var missing []string
	if p.deps.GetNamespace == nil {
		missing = append(missing, "GetNamespace")
	}
	if p.deps.GetLiveNamespace == nil {
		missing = append(missing, "GetLiveNamespace")
	}
	if p.deps.ClusterDeleting == nil {
		missing = append(missing, "ClusterDeleting")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s admission plugin: missing dependencies %v", PluginName, missing)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if isNamespace(a) {
		if a.GetOperation() != admission.Delete || a.GetSubresource() != "" {
			return nil
		}
		return p.validateNamespaceDelete(ctx, a)
	}
	// Cluster-scoped objects, and deletes of namespaced ones, are always
	// allowed.
	if a.GetNamespace() == "" || a.GetOperation() != admission.Create {
		return nil
	}
	if isAccessReview(a.GetResource().GroupResource()) {
		return nil
	}
	return p.validateCreate(ctx, a)
}

// validateNamespaceDelete refuses deleting an immortal namespace of a live
// logical cluster, and remembers admitted deletions for live lookups.
func (p *Plugin) validateNamespaceDelete(ctx context.Context, a admission.Attributes) error {
	cluster, err := clusterFrom(ctx)
	if err != nil {
		return err
	}
	if isImmortal(a.GetName()) {
		deleting, err := p.deps.ClusterDeleting(cluster)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Cannot tell whether the logical cluster is being deleted, protecting its namespace",
				"cluster", cluster, "namespace", a.GetName(), "err", err)
		}
		if err != nil || !deleting {
			return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errors.New("this namespace may not be deleted"))
		}
	}
	// Creates in the namespace must not trust a cache that does not show
	// the deletion yet.
	p.liveLookup.Add(informers.ToKey(cluster, "", a.GetName()), true, liveLookupTTL)
	return nil
}

// validateCreate refuses creating an object in a missing or terminating
// namespace of the request's logical cluster.
func (p *Plugin) validateCreate(ctx context.Context, a admission.Attributes) error {
	cluster, err := clusterFrom(ctx)
	if err != nil {
		return err
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	logger := klog.FromContext(ctx)

	name := a.GetNamespace()
	ns, err := p.deps.GetNamespace(cluster, name)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return apierrors.NewInternalError(fmt.Errorf("looking up namespace %q of logical cluster %q: %w", name, cluster, err))
	}
	forceLive := false
	if _, ok := p.liveLookup.Get(informers.ToKey(cluster, "", name)); ok {
		forceLive = exists && ns.Status.Phase != corev1.NamespaceTerminating
	}
	if !exists || forceLive {
		ns, err = p.deps.GetLiveNamespace(ctx, cluster, name)
		switch {
		case apierrors.IsNotFound(err):
			return apierrors.NewNotFound(namespacesResource, name)
		case err != nil:
			return apierrors.NewInternalError(fmt.Errorf("getting namespace %q of logical cluster %q: %w", name, cluster, err))
		}
		logger.V(4).Info("Found namespace by a live lookup", "cluster", cluster, "namespace", name)
	}

	if ns.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	forbidden := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", name))
	var status *apierrors.StatusError
	if errors.As(forbidden, &status) && status.ErrStatus.Details != nil {
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", name),
			Field:   "metadata.namespace",
		})
	}
	return forbidden
}

// isNamespace tells whether the request is for a namespace (or one of its
// subresources).
func isNamespace(a admission.Attributes) bool {
	return a.GetKind().GroupKind() == namespaceKind || a.GetResource().GroupResource() == namespacesResource
}

// clusterFrom returns the request's logical cluster. Writes always address
// one named cluster; anything else is a wiring error.
func clusterFrom(ctx context.Context) (logicalcluster.Name, error) {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() {
		return "", apierrors.NewInternalError(errors.New("no logical cluster in the request context"))
	}
	return c.Name, nil
}
