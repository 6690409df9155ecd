package rbac

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
)

// REST is the storage of one RBAC resource.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// ShortNames returns no short name: Kubernetes has none for RBAC resources.
func (*REST) ShortNames() []string {
	return nil
}

// NewRoleREST returns the storage of roles, persisted through optsGetter.
func NewRoleREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewRoleStrategy(scheme)
	return newREST(&genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.Role{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.RoleList{} },
		DefaultQualifiedResource:  rbacv1.Resource("roles"),
		SingularQualifiedResource: rbacv1.Resource("role"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            RoleTableConvertor(),
	}, optsGetter, storage.DefaultNamespaceScopedAttr)
}

// NewClusterRoleREST returns the storage of cluster roles, persisted
// through optsGetter.
func NewClusterRoleREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewClusterRoleStrategy(scheme)
	return newREST(&genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.ClusterRole{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.ClusterRoleList{} },
		DefaultQualifiedResource:  rbacv1.Resource("clusterroles"),
		SingularQualifiedResource: rbacv1.Resource("clusterrole"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            ClusterRoleTableConvertor(),
	}, optsGetter, storage.DefaultClusterScopedAttr)
}

// NewRoleBindingREST returns the storage of role bindings, persisted
// through optsGetter.
func NewRoleBindingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewRoleBindingStrategy(scheme)
	return newREST(&genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.RoleBinding{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.RoleBindingList{} },
		DefaultQualifiedResource:  rbacv1.Resource("rolebindings"),
		SingularQualifiedResource: rbacv1.Resource("rolebinding"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            RoleBindingTableConvertor(),
	}, optsGetter, storage.DefaultNamespaceScopedAttr)
}

// NewClusterRoleBindingREST returns the storage of cluster role bindings,
// persisted through optsGetter.
func NewClusterRoleBindingREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewClusterRoleBindingStrategy(scheme)
	return newREST(&genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
		DefaultQualifiedResource:  rbacv1.Resource("clusterrolebindings"),
		SingularQualifiedResource: rbacv1.Resource("clusterrolebinding"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		TableConvertor:            ClusterRoleBindingTableConvertor(),
	}, optsGetter, storage.DefaultClusterScopedAttr)
}

func newREST(store *genericregistry.Store, optsGetter generic.RESTOptionsGetter, attrs storage.AttrFunc) (*REST, error) {
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: attrs}); err != nil {
		return nil, fmt.Errorf("completing %s storage: %w", store.DefaultQualifiedResource, err)
	}
	return &REST{Store: store}, nil
}
