package bootstrap

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Ensure reconciles the default policy (ClusterRoles and
// ClusterRoleBindings) in the logical cluster client talks to, which must be
// system:admin for the bootstrap policy authorizer to see it. It is
// idempotent; call it at every start, once the system:admin cluster exists.
// It goes on after an object fails and returns all errors.
func Ensure(ctx context.Context, client kubernetes.Interface) error {
	logger := klog.FromContext(ctx).WithValues("cluster", logicalcluster.SystemAdmin)
	ctx = klog.NewContext(ctx, logger)
	var errs []error
	for _, role := range ClusterRoles() {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return ensureClusterRole(ctx, client, &role) }); err != nil {
			errs = append(errs, fmt.Errorf("ClusterRole %s: %w", role.Name, err))
		}
	}
	for _, binding := range ClusterRoleBindings() {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return ensureClusterRoleBinding(ctx, client, &binding) }); err != nil {
			errs = append(errs, fmt.Errorf("ClusterRoleBinding %s: %w", binding.Name, err))
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return fmt.Errorf("ensuring the bootstrap RBAC policy: %w", err)
	}
	return nil
}

func ensureClusterRole(ctx context.Context, client kubernetes.Interface, desired *rbacv1.ClusterRole) error {
	logger := klog.FromContext(ctx)
	roles := client.RbacV1().ClusterRoles()
	existing, err := roles.Get(ctx, desired.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := roles.Create(ctx, desired, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		logger.V(2).Info("Created bootstrap ClusterRole", "clusterrole", desired.Name)
		return nil
	}
	if err != nil {
		return err
	}
	updated, changed := reconcileClusterRole(existing, desired)
	if !changed {
		return nil
	}
	if _, err := roles.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return err
	}
	logger.Info("Updated bootstrap ClusterRole", "clusterrole", desired.Name)
	return nil
}

func ensureClusterRoleBinding(ctx context.Context, client kubernetes.Interface, desired *rbacv1.ClusterRoleBinding) error {
	logger := klog.FromContext(ctx)
	bindings := client.RbacV1().ClusterRoleBindings()
	existing, err := bindings.Get(ctx, desired.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := bindings.Create(ctx, desired, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		logger.V(2).Info("Created bootstrap ClusterRoleBinding", "clusterrolebinding", desired.Name)
		return nil
	}
	if err != nil {
		return err
	}
	updated, change := reconcileClusterRoleBinding(existing, desired)
	switch change {
	case bindingUpdate:
		if _, err := bindings.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
			return err
		}
		logger.Info("Updated bootstrap ClusterRoleBinding", "clusterrolebinding", desired.Name)
	case bindingRecreate:
		err := bindings.Delete(ctx, existing.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &existing.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		updated.ResourceVersion, updated.UID = "", ""
		if _, err := bindings.Create(ctx, updated, metav1.CreateOptions{}); err != nil {
			return err
		}
		logger.Info("Recreated bootstrap ClusterRoleBinding with a new role reference", "clusterrolebinding", desired.Name, "role", desired.RoleRef.Name)
	}
	return nil
}
