package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// NewRoleREST returns the storage of roles, persisted through optsGetter.
// Like Kubernetes, no RBAC resource has a short name.
func NewRoleREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       rbacv1.Resource("roles"),
		Singular:       "role",
		NewFunc:        func() runtime.Object { return &rbacv1.Role{} },
		NewListFunc:    func() runtime.Object { return &rbacv1.RoleList{} },
		Strategy:       NewRoleStrategy(scheme),
		TableConvertor: RoleTableConvertor(),
	})
}

// NewClusterRoleREST returns the storage of cluster roles, persisted
// through optsGetter.
func NewClusterRoleREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       rbacv1.Resource("clusterroles"),
		Singular:       "clusterrole",
		NewFunc:        func() runtime.Object { return &rbacv1.ClusterRole{} },
		NewListFunc:    func() runtime.Object { return &rbacv1.ClusterRoleList{} },
		Strategy:       NewClusterRoleStrategy(scheme),
		TableConvertor: ClusterRoleTableConvertor(),
	})
}

// NewRoleBindingREST returns the storage of role bindings, persisted
// through optsGetter.
func NewRoleBindingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       rbacv1.Resource("rolebindings"),
		Singular:       "rolebinding",
		NewFunc:        func() runtime.Object { return &rbacv1.RoleBinding{} },
		NewListFunc:    func() runtime.Object { return &rbacv1.RoleBindingList{} },
		Strategy:       NewRoleBindingStrategy(scheme),
		TableConvertor: RoleBindingTableConvertor(),
	})
}

// NewClusterRoleBindingREST returns the storage of cluster role bindings,
// persisted through optsGetter.
func NewClusterRoleBindingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	return store.NewREST(optsGetter, store.Options{
		Resource:       rbacv1.Resource("clusterrolebindings"),
		Singular:       "clusterrolebinding",
		NewFunc:        func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
		NewListFunc:    func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
		Strategy:       NewClusterRoleBindingStrategy(scheme),
		TableConvertor: ClusterRoleBindingTableConvertor(),
	})
}
