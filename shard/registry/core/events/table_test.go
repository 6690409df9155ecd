package events

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTableConvertor(t *testing.T) {
	tenDays := time.Now().Add(-10 * 24 * time.Hour)
	old := oldStyle(func(e *corev1.Event) {
		e.FirstTimestamp = metav1.NewTime(tenDays)
		e.LastTimestamp = metav1.NewTime(tenDays.Add(24 * time.Hour))
		e.Count = 5
		e.Source.Host = "node-1"
		e.InvolvedObject.FieldPath = "data"
		e.Message = " config changed\n"
	})
	series := newStyle(func(e *corev1.Event) {
		e.EventTime = metav1.NewMicroTime(tenDays)
		e.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(tenDays.Add(24 * time.Hour))}
	})
	single := newStyle(func(e *corev1.Event) {
		e.EventTime = metav1.NewMicroTime(tenDays)
		e.InvolvedObject = corev1.ObjectReference{Kind: "Namespace"}
	})

	table, err := TableConvertor().ConvertToTable(t.Context(), &corev1.EventList{Items: []corev1.Event{*old, *series, *single}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names, wide []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		} else {
			wide = append(wide, c.Name)
		}
	}
	if diff := cmp.Diff([]string{"Last Seen", "Type", "Reason", "Object", "Message"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Subobject", "Source", "First Seen", "Count", "Name"}, wide); diff != "" {
		t.Errorf("wide columns (-want +got):\n%s", diff)
	}
	want := [][]interface{}{
		{"9d", "Normal", "Updated", "configmap/web", "data", "tessera, node-1", "config changed", "10d", int64(5), "web.1"},
		{"9d", "Normal", "Updated", "configmap/web", "", "tessera.dev/controller, shard-1", "config changed", "10d", int64(3), "web.2"},
		{"10d", "Normal", "Updated", "namespace", "", "tessera.dev/controller, shard-1", "config changed", "10d", int64(1), "web.2"},
	}
	for i, row := range table.Rows {
		if diff := cmp.Diff(want[i], row.Cells); diff != "" {
			t.Errorf("row %d (-want +got):\n%s", i, diff)
		}
	}
}
