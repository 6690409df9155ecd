package events

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var eventTime = metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))

// oldStyle is an event as kubectl and old recorders write it through core v1.
func oldStyle(mutate ...func(*corev1.Event)) *corev1.Event {
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1", Namespace: "default", ResourceVersion: "1"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "web"},
		Reason:         "Updated",
		Message:        "config changed",
		Source:         corev1.EventSource{Component: "tessera"},
		FirstTimestamp: metav1.Now(),
		LastTimestamp:  metav1.Now(),
		Count:          1,
		Type:           corev1.EventTypeNormal,
	}
	for _, m := range mutate {
		m(e)
	}
	return e
}

// newStyle is an event as the events.k8s.io recorder writes it.
func newStyle(mutate ...func(*corev1.Event)) *corev1.Event {
	e := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "web.2", Namespace: "default", ResourceVersion: "1"},
		InvolvedObject:      corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "web"},
		Reason:              "Updated",
		Message:             "config changed",
		Type:                corev1.EventTypeNormal,
		EventTime:           eventTime,
		Action:              "Reconcile",
		ReportingController: "tessera.dev/controller",
		ReportingInstance:   "shard-1",
	}
	for _, m := range mutate {
		m(e)
	}
	return e
}

func TestValidateCreate(t *testing.T) {
	core := corev1.SchemeGroupVersion
	events := eventsv1.SchemeGroupVersion
	tests := []struct {
		name      string
		event     *corev1.Event
		version   schema.GroupVersion
		wantField string
	}{
		{name: "old style through core", event: oldStyle(), version: core},
		{name: "old style for a cluster-scoped object in default", event: oldStyle(func(e *corev1.Event) { e.InvolvedObject.Namespace = "" }), version: core},
		{name: "old style namespace mismatch", event: oldStyle(func(e *corev1.Event) { e.InvolvedObject.Namespace = "other" }), version: core, wantField: "involvedObject.namespace"},
		{name: "old style cluster-scoped object in other namespace", event: oldStyle(func(e *corev1.Event) {
			e.InvolvedObject.Namespace = ""
			e.Namespace = "team"
		}), version: core, wantField: "involvedObject.namespace"},
		{name: "new style through core", event: newStyle(), version: core},
		{name: "new style through core without controller", event: newStyle(func(e *corev1.Event) { e.ReportingController = "" }), version: core, wantField: "reportingComponent"},
		{name: "new style through events", event: newStyle(), version: events},
		{name: "events without reportingController", event: newStyle(func(e *corev1.Event) { e.ReportingController = "" }), version: events, wantField: "reportingController"},
		{name: "events with bad reportingController", event: newStyle(func(e *corev1.Event) { e.ReportingController = "a b" }), version: events, wantField: "reportingController"},
		{name: "events without reportingInstance", event: newStyle(func(e *corev1.Event) { e.ReportingInstance = "" }), version: events, wantField: "reportingInstance"},
		{name: "events with long reportingInstance", event: newStyle(func(e *corev1.Event) { e.ReportingInstance = strings.Repeat("i", 129) }), version: events, wantField: "reportingInstance"},
		{name: "events without action", event: newStyle(func(e *corev1.Event) { e.Action = "" }), version: events, wantField: "action"},
		{name: "events without reason", event: newStyle(func(e *corev1.Event) { e.Reason = "" }), version: events, wantField: "reason"},
		{name: "events with long note", event: newStyle(func(e *corev1.Event) { e.Message = strings.Repeat("n", 1025) }), version: events, wantField: "message"},
		{name: "events without eventTime", event: oldStyle(func(e *corev1.Event) {
			e.FirstTimestamp, e.LastTimestamp, e.Count, e.Source = metav1.Time{}, metav1.Time{}, 0, corev1.EventSource{}
		}), version: events, wantField: "eventTime"},
		{name: "events with bad type", event: newStyle(func(e *corev1.Event) { e.Type = "Info" }), version: events, wantField: "type"},
		{name: "events with deprecated count", event: newStyle(func(e *corev1.Event) { e.Count = 3 }), version: events, wantField: "count"},
		{name: "events with deprecated source", event: newStyle(func(e *corev1.Event) { e.Source.Component = "x" }), version: events, wantField: "source"},
		{name: "events with bad name", event: newStyle(func(e *corev1.Event) { e.Name = "Web" }), version: events, wantField: "metadata.name"},
		{name: "events with short series", event: newStyle(func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 1, LastObservedTime: eventTime} }), version: events, wantField: "series.count"},
		{name: "events with series", event: newStyle(func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: eventTime} }), version: events},
		{name: "no request version is strict", event: oldStyle(), wantField: "eventTime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateCreate(tt.event, tt.version)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			for _, err := range errs {
				if err.Field == tt.wantField {
					return
				}
			}
			t.Fatalf("want an error on %q, got %v", tt.wantField, errs)
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	events := eventsv1.SchemeGroupVersion
	tests := []struct {
		name      string
		old, new  *corev1.Event
		version   schema.GroupVersion
		wantField string
	}{
		{name: "core may change anything", old: oldStyle(), new: oldStyle(func(e *corev1.Event) { e.Message, e.Count = "again", 2 }), version: corev1.SchemeGroupVersion},
		{name: "events may add a series", old: newStyle(), new: newStyle(func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: eventTime} }), version: events},
		{name: "events may not change the note", old: newStyle(), new: newStyle(func(e *corev1.Event) { e.Message = "other" }), version: events, wantField: "message"},
		{name: "events may not change regarding", old: newStyle(), new: newStyle(func(e *corev1.Event) { e.InvolvedObject.Name = "other" }), version: events, wantField: "involvedObject"},
		{name: "events tolerate nanoseconds of eventTime", old: newStyle(), new: newStyle(func(e *corev1.Event) { e.EventTime = metav1.NewMicroTime(eventTime.Add(300)) }), version: events},
		{name: "events may not move eventTime", old: newStyle(), new: newStyle(func(e *corev1.Event) { e.EventTime = metav1.NewMicroTime(eventTime.Add(time.Second)) }), version: events, wantField: "eventTime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateUpdate(tt.new, tt.old, tt.version)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) == 0 || errs[0].Field != tt.wantField {
				t.Fatalf("want first error on %q, got %v", tt.wantField, errs)
			}
		})
	}
}

func TestValidateFinalizersAndNamespace(t *testing.T) {
	unqualified := func(e *corev1.Event) { e.Finalizers = []string{"cleanup"} }
	if errs := ValidateCreate(newStyle(unqualified), eventsv1.SchemeGroupVersion); len(errs) != 1 || errs[0].Field != "metadata.finalizers[0]" {
		t.Errorf("events.k8s.io create with an unqualified finalizer: %v, want one error on metadata.finalizers[0]", errs)
	}
	if errs := ValidateUpdate(newStyle(unqualified), newStyle(unqualified), eventsv1.SchemeGroupVersion); len(errs) != 1 {
		t.Errorf("events.k8s.io update keeping an unqualified finalizer: %v, want one error, as in Kubernetes", errs)
	}
	if errs := ValidateCreate(oldStyle(unqualified), corev1.SchemeGroupVersion); len(errs) != 0 {
		t.Errorf("core v1 create with an unqualified finalizer, which Kubernetes accepts: %v", errs)
	}
	standard := func(e *corev1.Event) { e.Finalizers = []string{"orphan", "example.com/f"} }
	if errs := ValidateCreate(newStyle(standard), eventsv1.SchemeGroupVersion); len(errs) != 0 {
		t.Errorf("standard and qualified finalizers: %v", errs)
	}
	// The namespace is left to the common metadata validation, as in
	// Kubernetes: the events validation reports only the mismatch.
	upper := oldStyle(func(e *corev1.Event) { e.Namespace, e.InvolvedObject.Namespace = "Default", "Default" })
	if errs := ValidateCreate(upper, corev1.SchemeGroupVersion); len(errs) != 0 {
		t.Errorf("namespace checked by the event validation: %v", errs)
	}
}
