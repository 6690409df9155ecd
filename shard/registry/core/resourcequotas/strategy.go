package resourcequotas

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of resource
// quotas. Writes to the quota keep its status, which the quota controller
// owns through the status subresource.
type Strategy struct {
	store.Strategy[*corev1.ResourceQuota]
}

// NewStrategy returns the strategy of resource quotas, typing objects with
// typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.Namespaced,
		func(rq *corev1.ResourceQuota) field.ErrorList {
			return append(Validate(rq), ValidateEnforceable(rq, nil)...)
		},
		func(rq, old *corev1.ResourceQuota) field.ErrorList {
			return append(ValidateUpdate(rq, old), ValidateEnforceable(rq, old)...)
		})}
}

// GetResetFields returns the fields writes to the quota reset: status.
func (Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1.SchemeGroupVersion, "status")
}

// PrepareForCreate clears the status.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{}
}

// PrepareForUpdate keeps the status of the stored quota.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = old.(*corev1.ResourceQuota).Status
}

// StatusStrategy is the update strategy of the status subresource: it
// changes the status only.
type StatusStrategy struct {
	Strategy
}

// GetResetFields returns the fields status writes reset: spec.
func (StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1.SchemeGroupVersion, "spec")
}

// PrepareForUpdate keeps the spec of the stored quota.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ResourceQuota).Spec = old.(*corev1.ResourceQuota).Spec
}

// ValidateUpdate validates a status update.
func (StatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateStatusUpdate(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota))
}
