// Package events is the registry of events, served twice over the same
// stored objects as in Kubernetes: as core v1 events and as events.k8s.io/v1
// events. Objects are stored as core v1 events; events.k8s.io/v1 requests
// are converted to and from core v1 events, and validated more strictly.
package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers the event kinds, their conversions and their field
// selector labels:
//   - corev1.Event and corev1.EventList as core v1 kinds and as kinds of the
//     internal versions of both the core group and events.k8s.io, so that
//     corev1.Event is the in-memory type behind both APIs;
//   - eventsv1.Event and eventsv1.EventList as events.k8s.io/v1 kinds,
//     converted to and from corev1.Event;
//   - the field labels of each API, those of events.k8s.io translated to the
//     core v1 names the storage selects on.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.Event{}, &corev1.EventList{})
	s.AddKnownTypes(schema.GroupVersion{Group: eventsv1.GroupName, Version: runtime.APIVersionInternal}, &corev1.Event{}, &corev1.EventList{})
	s.AddKnownTypes(eventsv1.SchemeGroupVersion, &eventsv1.Event{}, &eventsv1.EventList{})

	conversions := []struct {
		a, b interface{}
		fn   conversion.ConversionFunc
	}{
		{(*eventsv1.Event)(nil), (*corev1.Event)(nil), func(a, b interface{}, _ conversion.Scope) error {
			ConvertToCore(a.(*eventsv1.Event), b.(*corev1.Event))
			return nil
		}},
		{(*corev1.Event)(nil), (*eventsv1.Event)(nil), func(a, b interface{}, _ conversion.Scope) error {
			ConvertFromCore(a.(*corev1.Event), b.(*eventsv1.Event))
			return nil
		}},
		{(*eventsv1.EventList)(nil), (*corev1.EventList)(nil), func(a, b interface{}, _ conversion.Scope) error {
			convertListToCore(a.(*eventsv1.EventList), b.(*corev1.EventList))
			return nil
		}},
		{(*corev1.EventList)(nil), (*eventsv1.EventList)(nil), func(a, b interface{}, _ conversion.Scope) error {
			convertListFromCore(a.(*corev1.EventList), b.(*eventsv1.EventList))
			return nil
		}},
	}
	for _, c := range conversions {
		if err := s.AddConversionFunc(c.a, c.b, c.fn); err != nil {
			return fmt.Errorf("registering event conversion %T to %T: %w", c.a, c.b, err)
		}
	}

	if err := store.AddFieldLabels(s, corev1.SchemeGroupVersion, ConvertCoreFieldLabel, "Event"); err != nil {
		return err
	}
	return store.AddFieldLabels(s, eventsv1.SchemeGroupVersion, ConvertEventsFieldLabel, "Event")
}

// coreFieldLabels are the field selector labels of core v1 events.
var coreFieldLabels = map[string]bool{
	"involvedObject.kind":            true,
	"involvedObject.namespace":       true,
	"involvedObject.name":            true,
	"involvedObject.uid":             true,
	"involvedObject.apiVersion":      true,
	"involvedObject.resourceVersion": true,
	"involvedObject.fieldPath":       true,
	"reason":                         true,
	"reportingComponent":             true,
	"source":                         true,
	"type":                           true,
	"metadata.namespace":             true,
	"metadata.name":                  true,
}

// eventsFieldLabels maps the field selector labels of events.k8s.io/v1
// events to those of core v1 events.
var eventsFieldLabels = map[string]string{
	"reason":                    "reason",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
	"type":                      "type",
	"metadata.namespace":        "metadata.namespace",
	"metadata.name":             "metadata.name",
}

// ConvertCoreFieldLabel accepts the field selector labels of core v1 events.
func ConvertCoreFieldLabel(label, value string) (string, string, error) {
	if !coreFieldLabels[label] {
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
	return label, value, nil
}

// ConvertEventsFieldLabel translates a field selector label of
// events.k8s.io/v1 events to the core v1 label it selects on.
func ConvertEventsFieldLabel(label, value string) (string, string, error) {
	coreLabel, ok := eventsFieldLabels[label]
	if !ok {
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
	return coreLabel, value, nil
}
