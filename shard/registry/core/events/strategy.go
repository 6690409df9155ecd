package events

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of events,
// for both the core and the events.k8s.io API: validation depends on the
// API version of the request. Events have no status.
type Strategy struct {
	store.Strategy[*corev1.Event]
}

// NewStrategy returns the strategy of events, typing objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy[*corev1.Event](typer, store.Namespaced, nil, nil)}
}

// requestGroupVersion returns the API group and version of the request in
// ctx, or the zero value outside of a request.
func requestGroupVersion(ctx context.Context) schema.GroupVersion {
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		return schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	}
	return schema.GroupVersion{}
}

// Validate validates a new event for the API version of the request.
func (Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return ValidateCreate(obj.(*corev1.Event), requestGroupVersion(ctx))
}

// AllowCreateOnUpdate is true: recorders PUT events they may not have
// created yet.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return true }

// ValidateUpdate validates an update for the API version of the request.
func (Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateUpdate(obj.(*corev1.Event), old.(*corev1.Event), requestGroupVersion(ctx))
}

// GetAttrs returns the labels and selectable fields of an event.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	return store.Attrs(obj, SelectableFields)
}

// SelectableFields returns the fields of an event a field selector can
// match, under their core v1 names.
func SelectableFields(event *corev1.Event) fields.Set {
	source := event.Source.Component
	if source == "" {
		source = event.ReportingController
	}
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"involvedObject.kind":            event.InvolvedObject.Kind,
		"involvedObject.namespace":       event.InvolvedObject.Namespace,
		"involvedObject.name":            event.InvolvedObject.Name,
		"involvedObject.uid":             string(event.InvolvedObject.UID),
		"involvedObject.apiVersion":      event.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": event.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       event.InvolvedObject.FieldPath,
		"reason":                         event.Reason,
		"reportingComponent":             event.ReportingController,
		"source":                         source,
		"type":                           event.Type,
	}, &event.ObjectMeta, true)
}
