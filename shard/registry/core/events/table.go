package events

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints events as LAST SEEN TYPE REASON OBJECT MESSAGE, and
// with -o wide also SUBOBJECT SOURCE FIRST SEEN COUNT NAME. It serves both
// event APIs, since both store core v1 events.
func TableConvertor() printers.TableConvertor[*corev1.Event] {
	docs := corev1.Event{}.SwaggerDoc()
	return printers.TableConvertor[*corev1.Event]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Last Seen", Type: "string", Description: docs["lastTimestamp"]},
			{Name: "Type", Type: "string", Description: docs["type"]},
			{Name: "Reason", Type: "string", Description: docs["reason"]},
			{Name: "Object", Type: "string", Description: docs["involvedObject"]},
			{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
			{Name: "Source", Type: "string", Priority: 1, Description: docs["source"]},
			{Name: "Message", Type: "string", Description: docs["message"]},
			{Name: "First Seen", Type: "string", Priority: 1, Description: docs["firstTimestamp"]},
			{Name: "Count", Type: "integer", Priority: 1, Description: docs["count"]},
			{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		},
		Cells: cells,
	}
}

func cells(event *corev1.Event) []interface{} {
	firstSeen := printers.Age(event.FirstTimestamp)
	if event.FirstTimestamp.IsZero() {
		firstSeen = printers.MicroAge(event.EventTime)
	}
	lastSeen := printers.Age(event.LastTimestamp)
	if event.LastTimestamp.IsZero() {
		lastSeen = firstSeen
	}
	count := event.Count
	if event.Series != nil {
		lastSeen = printers.MicroAge(event.Series.LastObservedTime)
		count = event.Series.Count
	} else if count == 0 {
		// New-style events that happened once have no count.
		count = 1
	}

	object := strings.ToLower(event.InvolvedObject.Kind)
	if event.InvolvedObject.Name != "" {
		object += "/" + event.InvolvedObject.Name
	}

	return []interface{}{
		lastSeen,
		event.Type,
		event.Reason,
		object,
		event.InvolvedObject.FieldPath,
		source(event),
		strings.TrimSpace(event.Message),
		firstSeen,
		int64(count),
		event.Name,
	}
}

// source formats who reported the event, "component, host", from the old
// source fields or the new reporting fields.
func source(event *corev1.Event) string {
	component := event.Source.Component
	if component == "" {
		component = event.ReportingController
	}
	host := event.Source.Host
	if host == "" {
		host = event.ReportingInstance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}
