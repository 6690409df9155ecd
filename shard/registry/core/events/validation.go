package events

import (
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Length limits of event fields.
const (
	ReportingInstanceLengthLimit = 128
	ActionLengthLimit            = 128
	ReasonLengthLimit            = 128
	NoteLengthLimit              = 1024
)

// isLegacy reports whether events written through requestVersion get only
// the lenient validation of the core API: core v1 and events.k8s.io/v1beta1.
func isLegacy(requestVersion schema.GroupVersion) bool {
	return requestVersion == corev1.SchemeGroupVersion || requestVersion == eventsv1beta1.SchemeGroupVersion
}

// ValidateCreate validates a new event written through requestVersion.
// Every event must pass the lenient checks of the core API; events written
// through events.k8s.io/v1 (or without known version) must also be
// well-formed new-style events: valid metadata with qualified finalizer
// names, eventTime, a Normal or Warning type, no deprecated fields, a
// valid series.
func ValidateCreate(event *corev1.Event, requestVersion schema.GroupVersion) field.ErrorList {
	allErrs := validateLegacy(event, requestVersion)
	if isLegacy(requestVersion) {
		return allErrs
	}

	allErrs = append(allErrs, apivalidation.ValidateObjectMeta(&event.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	allErrs = append(allErrs, store.ValidateFinalizerNames(event.Finalizers)...)
	allErrs = append(allErrs, validateSeries(event)...)
	if event.EventTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("eventTime"), ""))
	}
	if event.Type != corev1.EventTypeNormal && event.Type != corev1.EventTypeWarning {
		allErrs = append(allErrs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", event.Type)))
	}
	if !event.FirstTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !event.LastTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if event.Count != 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if event.Source.Component != "" || event.Source.Host != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return allErrs
}

// ValidateUpdate validates an update of an event written through
// requestVersion. Through events.k8s.io/v1 only the series and metadata of
// an event may change.
func ValidateUpdate(event, old *corev1.Event, requestVersion schema.GroupVersion) field.ErrorList {
	allErrs := validateLegacy(event, requestVersion)
	if isLegacy(requestVersion) {
		return allErrs
	}

	allErrs = append(allErrs, apivalidation.ValidateObjectMetaUpdate(&event.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	allErrs = append(allErrs, store.ValidateFinalizerNames(event.Finalizers)...)
	if !reflect.DeepEqual(event.Series, old.Series) {
		allErrs = append(allErrs, validateSeries(event)...)
	}
	immutable := []struct {
		name     string
		new, old interface{}
	}{
		{"involvedObject", event.InvolvedObject, old.InvolvedObject},
		{"reason", event.Reason, old.Reason},
		{"message", event.Message, old.Message},
		{"source", event.Source, old.Source},
		{"firstTimestamp", event.FirstTimestamp, old.FirstTimestamp},
		{"lastTimestamp", event.LastTimestamp, old.LastTimestamp},
		{"count", event.Count, old.Count},
		{"type", event.Type, old.Type},
		{"action", event.Action, old.Action},
		{"related", event.Related, old.Related},
		{"reportingController", event.ReportingController, old.ReportingController},
		{"reportingInstance", event.ReportingInstance, old.ReportingInstance},
	}
	for _, f := range immutable {
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(f.new, f.old, field.NewPath(f.name))...)
	}
	// Tolerate sub-microsecond changes of eventTime: clients serializing
	// correctly truncate it to microseconds.
	if !event.EventTime.Truncate(time.Microsecond).Equal(old.EventTime.Truncate(time.Microsecond)) {
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(event.EventTime, old.EventTime, field.NewPath("eventTime"))...)
	}
	return allErrs
}

func validateSeries(event *corev1.Event) field.ErrorList {
	if event.Series == nil {
		return nil
	}
	var allErrs field.ErrorList
	if event.Series.Count < 2 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("series", "count"), "", "should be at least 2"))
	}
	if event.Series.LastObservedTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("series", "lastObservedTime"), ""))
	}
	return allErrs
}

// validateLegacy checks what every event must satisfy. Old-style events
// (without eventTime) must be in the namespace of their involved object;
// new-style events also need reportingController, reportingInstance,
// action and reason within their length limits.
func validateLegacy(event *corev1.Event, requestVersion schema.GroupVersion) field.ErrorList {
	var allErrs field.ErrorList
	reportingControllerField := "reportingController"
	if requestVersion == corev1.SchemeGroupVersion {
		reportingControllerField = "reportingComponent"
	}

	involvedNamespace := field.NewPath("involvedObject", "namespace")
	if event.EventTime.IsZero() {
		if event.InvolvedObject.Namespace == "" {
			// Old clients write events of cluster-scoped objects to "default".
			if event.Namespace != metav1.NamespaceNone && event.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(involvedNamespace, event.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if event.Namespace != event.InvolvedObject.Namespace {
			allErrs = append(allErrs, field.Invalid(involvedNamespace, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if event.InvolvedObject.Namespace == "" && event.Namespace != metav1.NamespaceDefault && event.Namespace != metav1.NamespaceSystem {
			allErrs = append(allErrs, field.Invalid(involvedNamespace, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		controllerPath := field.NewPath(reportingControllerField)
		if event.ReportingController == "" {
			allErrs = append(allErrs, field.Required(controllerPath, ""))
		}
		for _, msg := range validation.IsQualifiedName(event.ReportingController) {
			allErrs = append(allErrs, field.Invalid(controllerPath, event.ReportingController, msg))
		}
		allErrs = append(allErrs, requiredWithLimit(event.ReportingInstance, ReportingInstanceLengthLimit, field.NewPath("reportingInstance"))...)
		allErrs = append(allErrs, requiredWithLimit(event.Action, ActionLengthLimit, field.NewPath("action"))...)
		allErrs = append(allErrs, requiredWithLimit(event.Reason, ReasonLengthLimit, field.NewPath("reason"))...)
		if len(event.Message) > NoteLengthLimit {
			allErrs = append(allErrs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", NoteLengthLimit)))
		}
	}
	// As in Kubernetes, the namespace is left to the common validation of
	// object metadata, which refuses what is not a DNS label.
	return allErrs
}

func requiredWithLimit(value string, limit int, fldPath *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if len(value) > limit {
		return field.ErrorList{field.Invalid(fldPath, "", fmt.Sprintf("can have at most %v characters", limit))}
	}
	return nil
}
