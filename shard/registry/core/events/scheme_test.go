package events

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConversionRoundTrip(t *testing.T) {
	s := newScheme(t)
	in := &eventsv1.Event{
		ObjectMeta:               metav1.ObjectMeta{Name: "web.1", Namespace: "default", Labels: map[string]string{"a": "b"}},
		EventTime:                eventTime,
		Series:                   &eventsv1.EventSeries{Count: 4, LastObservedTime: eventTime},
		ReportingController:      "tessera.dev/controller",
		ReportingInstance:        "shard-1",
		Action:                   "Reconcile",
		Reason:                   "Updated",
		Regarding:                corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "web"},
		Related:                  &corev1.ObjectReference{Kind: "Secret", Name: "creds"},
		Note:                     "config changed",
		Type:                     corev1.EventTypeWarning,
		DeprecatedSource:         corev1.EventSource{Component: "c", Host: "h"},
		DeprecatedFirstTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		DeprecatedLastTimestamp:  metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)),
		DeprecatedCount:          7,
	}

	core := &corev1.Event{}
	if err := s.Convert(in, core, nil); err != nil {
		t.Fatal(err)
	}
	if core.InvolvedObject.Name != "web" || core.Message != "config changed" || core.Count != 7 || core.Source.Host != "h" || core.Series.Count != 4 {
		t.Errorf("core event: %+v", core)
	}
	core.Related.Name = "mutated"
	if in.Related.Name != "creds" {
		t.Error("conversion aliased related")
	}
	core.Related.Name = "creds"

	back, err := s.ConvertToVersion(core, eventsv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	got := back.(*eventsv1.Event)
	got.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	list, err := s.ConvertToVersion(&corev1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []corev1.Event{*core}}, eventsv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if l := list.(*eventsv1.EventList); l.ResourceVersion != "9" || len(l.Items) != 1 || l.Items[0].Note != "config changed" {
		t.Errorf("converted list: %+v", l)
	}

	// The core API serves stored events without conversion.
	same, err := s.ConvertToVersion(core, corev1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := same.(*corev1.Event); !ok {
		t.Errorf("core v1 event converted to %T", same)
	}
}

func TestFieldLabels(t *testing.T) {
	s := newScheme(t)
	tests := []struct {
		gv        string
		label     string
		wantLabel string
		wantErr   bool
	}{
		{gv: "v1", label: "involvedObject.name", wantLabel: "involvedObject.name"},
		{gv: "v1", label: "reportingComponent", wantLabel: "reportingComponent"},
		{gv: "v1", label: "source", wantLabel: "source"},
		{gv: "v1", label: "metadata.namespace", wantLabel: "metadata.namespace"},
		{gv: "v1", label: "regarding.name", wantErr: true},
		{gv: "events.k8s.io/v1", label: "regarding.name", wantLabel: "involvedObject.name"},
		{gv: "events.k8s.io/v1", label: "reportingController", wantLabel: "reportingComponent"},
		{gv: "events.k8s.io/v1", label: "type", wantLabel: "type"},
		{gv: "events.k8s.io/v1", label: "involvedObject.name", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.gv+" "+tt.label, func(t *testing.T) {
			gvk := corev1.SchemeGroupVersion.WithKind("Event")
			if tt.gv != "v1" {
				gvk = eventsv1.SchemeGroupVersion.WithKind("Event")
			}
			label, _, err := s.ConvertFieldLabel(gvk, tt.label, "x")
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if label != tt.wantLabel {
				t.Errorf("label %q, want %q", label, tt.wantLabel)
			}
		})
	}
}

func TestSelectableFields(t *testing.T) {
	e := newStyle()
	got := SelectableFields(e)
	for label, want := range map[string]string{
		"involvedObject.kind": "ConfigMap",
		"involvedObject.name": "web",
		"reportingComponent":  "tessera.dev/controller",
		"source":              "tessera.dev/controller",
		"type":                "Normal",
		"metadata.name":       "web.2",
		"metadata.namespace":  "default",
	} {
		if got[label] != want {
			t.Errorf("%s = %q, want %q", label, got[label], want)
		}
	}
	if got := SelectableFields(oldStyle())["source"]; got != "tessera" {
		t.Errorf("old-style source %q, want tessera", got)
	}
	// Every label the APIs accept is a selectable field.
	for label := range coreFieldLabels {
		if _, ok := fields.Set(got)[label]; !ok {
			t.Errorf("field label %s is not selectable", label)
		}
	}
}
