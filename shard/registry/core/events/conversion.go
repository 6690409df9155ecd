package events

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
)

// ConvertToCore converts an events.k8s.io/v1 event to the core v1 event it
// is stored as: regarding is involvedObject, note is message, and the
// deprecated* fields are the core fields of the same name.
func ConvertToCore(in *eventsv1.Event, out *corev1.Event) {
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.InvolvedObject = in.Regarding
	out.Reason = in.Reason
	out.Message = in.Note
	out.Source = in.DeprecatedSource
	out.FirstTimestamp = in.DeprecatedFirstTimestamp
	out.LastTimestamp = in.DeprecatedLastTimestamp
	out.Count = in.DeprecatedCount
	out.Type = in.Type
	out.EventTime = in.EventTime
	out.Series = nil
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	out.Action = in.Action
	out.Related = in.Related.DeepCopy()
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
}

// ConvertFromCore converts a stored core v1 event to its events.k8s.io/v1
// form.
func ConvertFromCore(in *corev1.Event, out *eventsv1.Event) {
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.EventTime = in.EventTime
	out.Series = nil
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
	out.Action = in.Action
	out.Reason = in.Reason
	out.Regarding = in.InvolvedObject
	out.Related = in.Related.DeepCopy()
	out.Note = in.Message
	out.Type = in.Type
	out.DeprecatedSource = in.Source
	out.DeprecatedFirstTimestamp = in.FirstTimestamp
	out.DeprecatedLastTimestamp = in.LastTimestamp
	out.DeprecatedCount = in.Count
}

func convertListToCore(in *eventsv1.EventList, out *corev1.EventList) {
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]corev1.Event, len(in.Items))
		for i := range in.Items {
			ConvertToCore(&in.Items[i], &out.Items[i])
		}
	}
}

func convertListFromCore(in *corev1.EventList, out *eventsv1.EventList) {
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]eventsv1.Event, len(in.Items))
		for i := range in.Items {
			ConvertFromCore(&in.Items[i], &out.Items[i])
		}
	}
}
