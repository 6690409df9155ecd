// Package rbac is the registry of rbac.authorization.k8s.io/v1 roles,
// clusterroles, rolebindings and clusterrolebindings: scheme registration,
// defaulting, strategies, validation, storage and table printing. It stores
// and validates; authorization and escalation checks are not its business.
package rbac

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers the RBAC kinds as rbac.authorization.k8s.io/v1
// kinds and as kinds of the group's internal version, the defaulting of
// bindings, and the field selector labels of every kind.
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: rbacv1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{rbacv1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv,
			&rbacv1.Role{}, &rbacv1.RoleList{},
			&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleList{},
			&rbacv1.RoleBinding{}, &rbacv1.RoleBindingList{},
			&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRoleBindingList{},
		)
	}

	s.AddTypeDefaultingFunc(&rbacv1.RoleBinding{}, func(obj interface{}) { SetRoleBindingDefaults(obj.(*rbacv1.RoleBinding)) })
	s.AddTypeDefaultingFunc(&rbacv1.RoleBindingList{}, func(obj interface{}) {
		list := obj.(*rbacv1.RoleBindingList)
		for i := range list.Items {
			SetRoleBindingDefaults(&list.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&rbacv1.ClusterRoleBinding{}, func(obj interface{}) { SetClusterRoleBindingDefaults(obj.(*rbacv1.ClusterRoleBinding)) })
	s.AddTypeDefaultingFunc(&rbacv1.ClusterRoleBindingList{}, func(obj interface{}) {
		list := obj.(*rbacv1.ClusterRoleBindingList)
		for i := range list.Items {
			SetClusterRoleBindingDefaults(&list.Items[i])
		}
	})

	for _, kind := range []string{"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"} {
		if err := s.AddFieldLabelConversionFunc(rbacv1.SchemeGroupVersion.WithKind(kind), runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
			return fmt.Errorf("registering %s field labels: %w", kind, err)
		}
	}
	return nil
}
