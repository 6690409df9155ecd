package serviceaccount

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// DefaultServiceAccountName is the service account every namespace gets.
const DefaultServiceAccountName = "default"

// serviceAccounts ensures the default service account of one namespace.
// Its dependencies are plain functions, so it is tested without an API
// server.
type serviceAccounts struct {
	// getNamespace returns a namespace from a cache, or NotFound.
	getNamespace func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error)
	// getServiceAccount returns a service account from a cache, or
	// NotFound.
	getServiceAccount func(cluster logicalcluster.Name, namespace, name string) (*corev1.ServiceAccount, error)
	// createServiceAccount creates a service account in a logical cluster.
	createServiceAccount func(ctx context.Context, cluster logicalcluster.Name, sa *corev1.ServiceAccount) error
}

// Reconcile ensures that the namespace key names has a default service
// account, unless it is gone or terminating.
func (r *serviceAccounts) Reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	ns, err := r.getNamespace(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting namespace: %w", err)
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		logger.V(4).Info("Skipping terminating namespace")
		return reconciler.Result{}, nil
	}

	_, err = r.getServiceAccount(key.Cluster, key.Name, DefaultServiceAccountName)
	if err == nil {
		return reconciler.Result{}, nil
	}
	if !apierrors.IsNotFound(err) {
		return reconciler.Result{}, fmt.Errorf("getting service account %s: %w", DefaultServiceAccountName, err)
	}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccountName, Namespace: key.Name}}
	err = r.createServiceAccount(ctx, key.Cluster, sa)
	switch {
	case err == nil:
		logger.V(3).Info("Created service account", "serviceAccount", klog.KObj(sa))
		return reconciler.Result{}, nil
	case apierrors.IsAlreadyExists(err):
		// The cache lags behind; the service account is there.
		return reconciler.Result{}, nil
	case apierrors.IsNotFound(err), isNamespaceTerminating(err):
		// The namespace went away or started terminating meanwhile.
		logger.V(4).Info("Not creating service account in a namespace that is gone or terminating", "err", err)
		return reconciler.Result{}, nil
	default:
		return reconciler.Result{}, fmt.Errorf("creating service account %s: %w", DefaultServiceAccountName, err)
	}
}

// isNamespaceTerminating tells whether err refuses a create because the
// namespace is terminating.
func isNamespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
