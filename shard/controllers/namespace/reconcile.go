package namespace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// minRequeue and maxRequeue bound the delay before a namespace whose
	// content is still going away is looked at again.
	minRequeue = time.Second
	maxRequeue = time.Minute
)

// namespaces empties terminating namespaces and then removes the
// "kubernetes" finalizer from them. Its dependencies are plain functions,
// so it is tested without an API server.
type namespaces struct {
	// getNamespace returns a namespace from a cache, or NotFound.
	getNamespace func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error)
	// getLiveNamespace returns a namespace from the API server, or
	// NotFound.
	getLiveNamespace func(ctx context.Context, cluster logicalcluster.Name, name string) (*corev1.Namespace, error)
	// discover returns the namespaced resources of a logical cluster whose
	// objects can be deleted. On partial failure it returns what it found
	// and an error.
	discover func(ctx context.Context, cluster logicalcluster.Name) ([]resource, *discoveryError)
	// content deletes the objects of a namespace.
	content contentClient
	// updateStatus writes the status of a namespace.
	updateStatus func(ctx context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) (*corev1.Namespace, error)
	// finalize writes spec.finalizers of a namespace through its finalize
	// subresource.
	finalize func(ctx context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) (*corev1.Namespace, error)
	// now returns the current time.
	now func() time.Time
}

// errNoDiscovery is the error of a deletion pass that discovered nothing.
var errNoDiscovery = errors.New("no resources discovered")

// discoveryError is what discovery can report about a logical cluster: group
// versions it could not reach, and group versions it could not parse.
type discoveryError struct {
	discovery error
	parse     error
}

// Reconcile processes the namespace key names. Nothing happens unless it is
// being deleted and still has the "kubernetes" finalizer.
func (r *namespaces) Reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	cached, err := r.getNamespace(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting namespace: %w", err)
	}
	if !needsContentDeletion(cached) {
		return reconciler.Result{}, nil
	}
	// Deleting content on the word of a cache could hit a namespace of the
	// same name created after this one was finalized.
	ns, err := r.getLiveNamespace(ctx, key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting namespace: %w", err)
	}
	if !needsContentDeletion(ns) {
		return reconciler.Result{}, nil
	}

	logger := klog.FromContext(ctx)
	p := r.deleteAllContent(ctx, key.Cluster, ns.Name)

	ns, err = r.writeConditions(ctx, key.Cluster, ns, p)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if len(p.contentErrs) > 0 {
		errs := make([]error, 0, len(p.contentErrs))
		for _, gr := range sortedGroupResources(p.contentErrs) {
			errs = append(errs, fmt.Errorf("%s: %w", gr, p.contentErrs[gr]))
		}
		return reconciler.Result{}, fmt.Errorf("deleting the content of the namespace: %w", utilerrors.NewAggregate(errs))
	}
	if p.discoveryErr != nil || p.parseErr != nil {
		// Some resources may hold objects this pass could not see.
		return reconciler.Result{}, fmt.Errorf("discovering the resources of the logical cluster: %w", errors.Join(p.discoveryErr, p.parseErr))
	}
	if len(p.remaining) > 0 {
		delay := requeueDelay(r.now().Sub(ns.DeletionTimestamp.Time))
		logger.V(2).Info("Waiting for the content of the namespace to go away", "remaining", len(p.remaining), "after", delay)
		return reconciler.Result{RequeueAfter: delay}, nil
	}

	return reconciler.Result{}, r.removeFinalizer(ctx, key.Cluster, ns)
}

// deleteAllContent deletes the objects of every namespaced resource of the
// cluster in the namespace, and reports what is left.
func (r *namespaces) deleteAllContent(ctx context.Context, cluster logicalcluster.Name, namespace string) *progress {
	logger := klog.FromContext(ctx)
	p := &progress{}
	resources, derr := r.discover(ctx, cluster)
	if derr != nil {
		p.discoveryErr, p.parseErr = derr.discovery, derr.parse
		if len(resources) == 0 && p.discoveryErr == nil {
			p.discoveryErr = errNoDiscovery
		}
	}
	for _, res := range resources {
		left, err := r.content.deleteContent(ctx, cluster, namespace, res)
		if err != nil {
			if p.contentErrs == nil {
				p.contentErrs = map[schema.GroupResource]error{}
			}
			p.contentErrs[res.GroupResource()] = err
			continue
		}
		if left.count > 0 {
			if p.remaining == nil {
				p.remaining = map[schema.GroupResource]int{}
			}
			p.remaining[res.GroupResource()] = left.count
			logger.V(4).Info("Objects remain", "resource", res.GroupResource().String(), "count", left.count)
		}
		for f, n := range left.finalizers {
			if p.finalizers == nil {
				p.finalizers = map[string]int{}
			}
			p.finalizers[f] += n
		}
	}
	return p
}

// writeConditions sets the namespace's deletion conditions from p, and
// returns the namespace as written.
func (r *namespaces) writeConditions(ctx context.Context, cluster logicalcluster.Name, ns *corev1.Namespace, p *progress) (*corev1.Namespace, error) {
	conditions, changed := mergeConditions(ns.Status.Conditions, p.conditions(), metav1.NewTime(r.now()))
	if !changed {
		return ns, nil
	}
	ns = ns.DeepCopy()
	ns.Status.Conditions = conditions
	updated, err := r.updateStatus(ctx, cluster, ns)
	if err != nil {
		return nil, fmt.Errorf("updating the status of the namespace: %w", err)
	}
	return updated, nil
}

// removeFinalizer removes "kubernetes" from spec.finalizers, after which the
// registry deletes the namespace once no finalizer is left.
func (r *namespaces) removeFinalizer(ctx context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) error {
	ns = ns.DeepCopy()
	ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool {
		return f == corev1.FinalizerKubernetes
	})
	_, err := r.finalize(ctx, cluster, ns)
	switch {
	case err == nil:
		klog.FromContext(ctx).V(2).Info("Namespace is empty, removed its finalizer", "finalizer", corev1.FinalizerKubernetes)
		return nil
	case apierrors.IsNotFound(err):
		return nil
	default:
		return fmt.Errorf("finalizing the namespace: %w", err)
	}
}

// needsContentDeletion tells whether ns is being deleted and waits for this
// controller.
func needsContentDeletion(ns *corev1.Namespace) bool {
	return ns.DeletionTimestamp != nil && slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

// requeueDelay is how long to wait before looking again at a namespace that
// has been terminating for terminatingFor: a quarter of that, within
// [minRequeue, maxRequeue], so that a namespace waiting on a finalizer that
// never goes costs one pass a minute.
func requeueDelay(terminatingFor time.Duration) time.Duration {
	return min(max(terminatingFor/4, minRequeue), maxRequeue)
}
