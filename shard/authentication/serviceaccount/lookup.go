package serviceaccount

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Getter returns an object of a logical cluster, or a NotFound error.
type Getter[T any] func(ctx context.Context, cluster logicalcluster.Name, namespace, name string) (T, error)

// Lookup finds objects of one logical cluster: in an informer cache first,
// and from the API server when the cache has no acceptable object (it may
// lag a fresh create, an update, a delete or a recreate). Objects may be
// shared with the cache: do not change them.
//
// Cache audit (issue 9): cluster-keyed: informer keys are
// cluster|namespace/name, and Live asks the cluster's own client.
type Lookup[T metav1.Object] struct {
	// Cached reads the informer cache.
	Cached Getter[T]
	// Live reads the API server; nil means cache only.
	Live Getter[T]
}

// Get returns the object namespace/name of cluster. When the cache has no
// such object, or one that accept (if not nil) refuses, the API server is
// asked; the caller still checks what it gets. Errors are NotFound errors
// or wrap what went wrong.
func (l Lookup[T]) Get(ctx context.Context, cluster logicalcluster.Name, namespace, name string, accept func(T) bool) (T, error) {
	obj, err := l.Cached(ctx, cluster, namespace, name)
	switch {
	case err == nil && (accept == nil || accept(obj)):
		return obj, nil
	case err != nil && !apierrors.IsNotFound(err):
		return obj, err
	case l.Live == nil:
		return obj, err
	}
	return l.Live(ctx, cluster, namespace, name)
}

// HasUID accepts objects with uid; nil (accept all) for an empty uid.
func HasUID[T metav1.Object](uid types.UID) func(T) bool {
	if uid == "" {
		return nil
	}
	return func(obj T) bool { return obj.GetUID() == uid }
}

// NewServiceAccountLookup returns a Lookup of service accounts over a
// wildcard informer and, on cache misses, the per-cluster clients of the
// shard (nil for cache only).
func NewServiceAccountLookup(informer informers.Informer[*corev1.ServiceAccount], clients *clusters.ClusterClientset) Lookup[*corev1.ServiceAccount] {
	l := Lookup[*corev1.ServiceAccount]{
		Cached: func(_ context.Context, cluster logicalcluster.Name, namespace, name string) (*corev1.ServiceAccount, error) {
			return informer.Lister().Cluster(cluster).Namespace(namespace).Get(name)
		},
	}
	if clients != nil {
		l.Live = live(clients, func(c kubernetes.Interface, ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
			return c.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
		})
	}
	return l
}

// NewSecretLookup returns a Lookup of secrets over a wildcard informer
// (which may hold only some secrets, for example those of type
// kubernetes.io/service-account-token) and, on cache misses, the
// per-cluster clients of the shard (nil for cache only).
func NewSecretLookup(informer informers.Informer[*corev1.Secret], clients *clusters.ClusterClientset) Lookup[*corev1.Secret] {
	l := Lookup[*corev1.Secret]{
		Cached: func(_ context.Context, cluster logicalcluster.Name, namespace, name string) (*corev1.Secret, error) {
			return informer.Lister().Cluster(cluster).Namespace(namespace).Get(name)
		},
	}
	if clients != nil {
		l.Live = live(clients, func(c kubernetes.Interface, ctx context.Context, namespace, name string) (*corev1.Secret, error) {
			return c.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		})
	}
	return l
}

// live adapts a typed GET to a Getter over per-cluster clients.
func live[T any](clients *clusters.ClusterClientset, get func(c kubernetes.Interface, ctx context.Context, namespace, name string) (T, error)) Getter[T] {
	return func(ctx context.Context, cluster logicalcluster.Name, namespace, name string) (T, error) {
		c, err := clients.For(cluster)
		if err != nil {
			var zero T
			return zero, fmt.Errorf("client for logical cluster %q: %w", cluster, err)
		}
		return get(c, ctx, namespace, name)
	}
}
