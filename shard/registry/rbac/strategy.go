package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of one RBAC
// kind T. RBAC objects have no status; PUT creates missing ones, which is
// how bootstrap policy is reconciled.
type Strategy[T runtime.Object] struct {
	store.Strategy[T]
}

var _ rest.RESTCreateUpdateStrategy = Strategy[*rbacv1.Role]{}

// NewRoleStrategy returns the strategy of roles.
func NewRoleStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.Role] {
	return Strategy[*rbacv1.Role]{store.NewStrategy(typer, store.Namespaced, ValidateRole, ValidateRoleUpdate)}
}

// NewClusterRoleStrategy returns the strategy of cluster roles.
func NewClusterRoleStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.ClusterRole] {
	return Strategy[*rbacv1.ClusterRole]{store.NewStrategy(typer, store.ClusterScoped, ValidateClusterRole, ValidateClusterRoleUpdate)}
}

// NewRoleBindingStrategy returns the strategy of role bindings.
func NewRoleBindingStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.RoleBinding] {
	return Strategy[*rbacv1.RoleBinding]{store.NewStrategy(typer, store.Namespaced, ValidateRoleBinding, ValidateRoleBindingUpdate)}
}

// NewClusterRoleBindingStrategy returns the strategy of cluster role
// bindings.
func NewClusterRoleBindingStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.ClusterRoleBinding] {
	return Strategy[*rbacv1.ClusterRoleBinding]{store.NewStrategy(typer, store.ClusterScoped, ValidateClusterRoleBinding, ValidateClusterRoleBindingUpdate)}
}

// AllowCreateOnUpdate is true: PUT creates missing RBAC objects.
func (Strategy[T]) AllowCreateOnUpdate(context.Context) bool { return true }
