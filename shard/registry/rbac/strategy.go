package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
)

// Strategy implements the create, update and delete behaviour of one RBAC
// kind T. RBAC objects have no status; PUT creates missing ones, which is
// how bootstrap policy is reconciled.
type Strategy[T runtime.Object] struct {
	runtime.ObjectTyper
	names.NameGenerator
	namespaced     bool
	validate       func(T) field.ErrorList
	validateUpdate func(obj, old T) field.ErrorList
}

var _ rest.RESTCreateUpdateStrategy = Strategy[*rbacv1.Role]{}

// NewRoleStrategy returns the strategy of roles.
func NewRoleStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.Role] {
	return Strategy[*rbacv1.Role]{typer, names.SimpleNameGenerator, true, ValidateRole, ValidateRoleUpdate}
}

// NewClusterRoleStrategy returns the strategy of cluster roles.
func NewClusterRoleStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.ClusterRole] {
	return Strategy[*rbacv1.ClusterRole]{typer, names.SimpleNameGenerator, false, ValidateClusterRole, ValidateClusterRoleUpdate}
}

// NewRoleBindingStrategy returns the strategy of role bindings.
func NewRoleBindingStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.RoleBinding] {
	return Strategy[*rbacv1.RoleBinding]{typer, names.SimpleNameGenerator, true, ValidateRoleBinding, ValidateRoleBindingUpdate}
}

// NewClusterRoleBindingStrategy returns the strategy of cluster role
// bindings.
func NewClusterRoleBindingStrategy(typer runtime.ObjectTyper) Strategy[*rbacv1.ClusterRoleBinding] {
	return Strategy[*rbacv1.ClusterRoleBinding]{typer, names.SimpleNameGenerator, false, ValidateClusterRoleBinding, ValidateClusterRoleBindingUpdate}
}

// NamespaceScoped is true for roles and role bindings.
func (s Strategy[T]) NamespaceScoped() bool { return s.namespaced }

// PrepareForCreate does nothing: RBAC objects have no status.
func (Strategy[T]) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: RBAC objects have no status.
func (Strategy[T]) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new object.
func (s Strategy[T]) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validate(obj.(T))
}

// WarningsOnCreate returns no warnings.
func (Strategy[T]) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (Strategy[T]) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is true: PUT creates missing RBAC objects.
func (Strategy[T]) AllowCreateOnUpdate(context.Context) bool { return true }

// ValidateUpdate validates an update.
func (s Strategy[T]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validateUpdate(obj.(T), old.(T))
}

// WarningsOnUpdate returns no warnings.
func (Strategy[T]) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (Strategy[T]) AllowUnconditionalUpdate(context.Context) bool { return true }
