// Package rbac is the registry of rbac.authorization.k8s.io/v1 roles,
// clusterroles, rolebindings and clusterrolebindings: scheme registration,
// defaulting, strategies, validation, storage and table printing. It stores
// and validates; authorization and escalation checks are not its business.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers the RBAC kinds as rbac.authorization.k8s.io/v1
// kinds and as kinds of the group's internal version, the defaulting of
// bindings, and the field selector labels of every kind.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, rbacv1.SchemeGroupVersion,
		&rbacv1.Role{}, &rbacv1.RoleList{},
		&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleList{},
		&rbacv1.RoleBinding{}, &rbacv1.RoleBindingList{},
		&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRoleBindingList{},
	)
	store.AddDefaulting(s, SetRoleBindingDefaults, func(l *rbacv1.RoleBindingList) []rbacv1.RoleBinding { return l.Items })
	store.AddDefaulting(s, SetClusterRoleBindingDefaults, func(l *rbacv1.ClusterRoleBindingList) []rbacv1.ClusterRoleBinding { return l.Items })
	return store.AddFieldLabels(s, rbacv1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion,
		"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
}
