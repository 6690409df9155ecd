package serviceaccounttokens

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// tokens fills and cleans up the legacy token Secret a key names. Its
// dependencies are plain functions, so it is tested without an API server.
type tokens struct {
	// getSecret returns a token Secret from a cache, or NotFound.
	getSecret func(cluster logicalcluster.Name, namespace, name string) (*corev1.Secret, error)
	// getServiceAccount returns a service account, from the API server if
	// the cache has none with uid (any UID if uid is empty), or NotFound.
	getServiceAccount func(ctx context.Context, cluster logicalcluster.Name, namespace, name string, uid types.UID) (*corev1.ServiceAccount, error)
	// issue returns the legacy token of secret for sa in cluster.
	issue func(cluster logicalcluster.Name, sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error)
	// updateSecret writes secret, failing with a conflict if it changed.
	updateSecret func(ctx context.Context, cluster logicalcluster.Name, secret *corev1.Secret) error
	// deleteSecret deletes the Secret namespace/name if it still has uid.
	deleteSecret func(ctx context.Context, cluster logicalcluster.Name, namespace, name string, uid types.UID) error
	// rootCA is written into the Secrets as ca.crt.
	rootCA []byte
}

// Reconcile makes the token Secret key names complete: a token for its
// service account, the CA and the namespace, and the service account's
// UID. It deletes the Secret when its service account does not exist (or
// exists with another UID than the Secret names), as Kubernetes' tokens
// controller does.
func (r *tokens) Reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	secret, err := r.getSecret(key.Cluster, key.Namespace, key.Name)
	switch {
	case apierrors.IsNotFound(err):
		return reconciler.Result{}, nil
	case err != nil:
		return reconciler.Result{}, fmt.Errorf("getting secret: %w", err)
	case secret.Type != corev1.SecretTypeServiceAccountToken || secret.DeletionTimestamp != nil:
		return reconciler.Result{}, nil
	}
	saName := secret.Annotations[corev1.ServiceAccountNameKey]
	if saName == "" {
		logger.V(4).Info("Skipping token secret that names no service account")
		return reconciler.Result{}, nil
	}
	saUID := types.UID(secret.Annotations[corev1.ServiceAccountUIDKey])

	sa, err := r.getServiceAccount(ctx, key.Cluster, key.Namespace, saName, saUID)
	switch {
	case apierrors.IsNotFound(err), err == nil && saUID != "" && sa.UID != saUID:
		return reconciler.Result{}, r.delete(ctx, key, secret, saName)
	case err != nil:
		return reconciler.Result{}, fmt.Errorf("getting service account %s: %w", saName, err)
	case sa.DeletionTimestamp != nil:
		// Its deletion enqueues the secret again.
		return reconciler.Result{}, nil
	}

	updated, err := r.complete(key.Cluster, sa, secret)
	if err != nil || updated == nil {
		return reconciler.Result{}, err
	}
	err = r.updateSecret(ctx, key.Cluster, updated)
	switch {
	case apierrors.IsNotFound(err):
		return reconciler.Result{}, nil
	case err != nil:
		return reconciler.Result{}, fmt.Errorf("updating token secret: %w", err)
	}
	logger.V(2).Info("Filled service account token secret", "serviceAccount", klog.KObj(sa))
	return reconciler.Result{}, nil
}

// complete returns a copy of secret with what is missing filled in, or nil
// if nothing is.
func (r *tokens) complete(cluster logicalcluster.Name, sa *corev1.ServiceAccount, secret *corev1.Secret) (*corev1.Secret, error) {
	needsUID := secret.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID)
	needsToken := len(secret.Data[corev1.ServiceAccountTokenKey]) == 0
	needsCA := len(r.rootCA) > 0 && !bytes.Equal(secret.Data[corev1.ServiceAccountRootCAKey], r.rootCA)
	needsNamespace := string(secret.Data[corev1.ServiceAccountNamespaceKey]) != secret.Namespace
	if !needsUID && !needsToken && !needsCA && !needsNamespace {
		return nil, nil
	}

	out := secret.DeepCopy()
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	out.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	if needsToken {
		token, err := r.issue(cluster, sa, out)
		if err != nil {
			return nil, fmt.Errorf("issuing token: %w", err)
		}
		out.Data[corev1.ServiceAccountTokenKey] = []byte(token)
	}
	if needsCA {
		out.Data[corev1.ServiceAccountRootCAKey] = bytes.Clone(r.rootCA)
	}
	out.Data[corev1.ServiceAccountNamespaceKey] = []byte(out.Namespace)
	return out, nil
}

// delete deletes a token secret whose service account is gone.
func (r *tokens) delete(ctx context.Context, key reconciler.Key, secret *corev1.Secret, saName string) error {
	err := r.deleteSecret(ctx, key.Cluster, key.Namespace, key.Name, secret.UID)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone already, or replaced by a new secret, which has its own
		// event.
		return nil
	case err != nil:
		return fmt.Errorf("deleting token secret of missing service account %s: %w", saName, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted token secret of a missing service account", "serviceAccount", klog.KRef(key.Namespace, saName))
	return nil
}
