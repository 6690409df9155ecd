package namespaces

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of
// namespaces. Writes to the namespace keep its status and spec.finalizers,
// which only the status and finalize subresources change.
type Strategy struct {
	store.Strategy[*corev1.Namespace]
}

// NewStrategy returns the strategy of namespaces, typing objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.ClusterScoped, Validate, ValidateUpdate)}
}

// GetResetFields returns the fields writes to the namespace reset: status.
func (Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1.SchemeGroupVersion, "status")
}

// PrepareForCreate makes a new namespace Active and adds the "kubernetes"
// finalizer, which the namespace controller removes once the namespace is
// empty.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return
		}
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

// PrepareForUpdate keeps the status and spec.finalizers of the stored
// namespace.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec.Finalizers = oldNS.Spec.Finalizers
	ns.Status = oldNS.Status
}

// Canonicalize labels the namespace with its name; on create this is the
// first point at which a generated name is known.
func (Strategy) Canonicalize(obj runtime.Object) {
	setNameLabel(obj.(*corev1.Namespace))
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

// PrepareForUpdate keeps the spec of the stored namespace.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.Namespace).Spec = old.(*corev1.Namespace).Spec
}

// ValidateUpdate validates a status update.
func (StatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateStatusUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// FinalizeStrategy is the update strategy of the finalize subresource: it
// changes spec.finalizers and never the status.
type FinalizeStrategy struct {
	Strategy
}

// GetResetFields returns the fields finalize writes reset: status.
func (FinalizeStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1.SchemeGroupVersion, "status")
}

// PrepareForUpdate keeps the status of the stored namespace.
func (FinalizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.Namespace).Status = old.(*corev1.Namespace).Status
}

// ValidateUpdate validates a finalize update.
func (FinalizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateFinalizeUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// GetAttrs returns the labels and selectable fields of a namespace.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	return store.Attrs(obj, SelectableFields)
}

// SelectableFields returns the fields of a namespace a field selector can
// match: metadata.name, name and status.phase.
func SelectableFields(ns *corev1.Namespace) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"status.phase": string(ns.Status.Phase),
		"name":         ns.Name,
	}, &ns.ObjectMeta, false)
}
