package resourcequotas

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Strategy implements the create, update and delete behaviour of resource
// quotas. Writes to the quota keep its status, which the quota controller
// owns through the status subresource.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of resource quotas, typing objects with
// typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator}
}

// NamespaceScoped is true: resource quotas live in namespaces.
func (Strategy) NamespaceScoped() bool { return true }

// GetResetFields returns the fields writes to the quota reset: status.
func (Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"v1": fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears the status.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{}
}

// PrepareForUpdate keeps the status of the stored quota.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = old.(*corev1.ResourceQuota).Status
}

// Validate validates a new resource quota.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return Validate(obj.(*corev1.ResourceQuota))
}

// WarningsOnCreate returns no warnings.
func (Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (Strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: PUT does not create quotas.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// ValidateUpdate validates an update of a resource quota.
func (Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateUpdate(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota))
}

// WarningsOnUpdate returns no warnings.
func (Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// StatusStrategy is the update strategy of the status subresource: it
// changes the status only.
type StatusStrategy struct {
	Strategy
}

// GetResetFields returns the fields status writes reset: spec.
func (StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"v1": fieldpath.NewSet(fieldpath.MakePathOrDie("spec")),
	}
}

// PrepareForUpdate keeps the spec of the stored quota.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ResourceQuota).Spec = old.(*corev1.ResourceQuota).Spec
}

// ValidateUpdate validates a status update.
func (StatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateStatusUpdate(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota))
}
