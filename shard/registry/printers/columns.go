package printers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// objectMetaDocs holds the field descriptions of metav1.ObjectMeta, used as
// column descriptions.
var objectMetaDocs = metav1.ObjectMeta{}.SwaggerDoc()

// NameColumn is the NAME column every table starts with.
func NameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDocs["name"]}
}

// AgeColumn is the AGE column: the time since the object was created.
func AgeColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDocs["creationTimestamp"]}
}

// CreatedAtColumn is the CREATED AT column: the creation timestamp in RFC 3339.
func CreatedAtColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Created At", Type: "date", Description: objectMetaDocs["creationTimestamp"]}
}

// Age formats the time elapsed since t the way kubectl shows ages ("5m",
// "3d"), or "<unknown>" when t is not set.
func Age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// MicroAge is Age for a metav1.MicroTime.
func MicroAge(t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// CreatedAt formats a creation timestamp for a CREATED AT column.
func CreatedAt(t metav1.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// OrNone returns s, or "<none>" when s is empty.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// CRDColumn is a column as the API server describes an additional printer
// column of a CustomResourceDefinition that has no description of its own.
// kcp serves its APIs as CRDs; Tessera's registries of them print their
// columns so.
func CRDColumn(name, typ, jsonPath string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: "Custom resource definition column (in JSONPath format): " + jsonPath}
}

// ConditionStatus is the cell of a column that shows the status of the
// condition t of obj (.status.conditions[?(@.type=="<t>")].status): nil,
// an empty cell as for a CRD column whose path finds nothing, when obj has
// no such condition.
func ConditionStatus(obj conditionsv1alpha1.Getter, t conditionsv1alpha1.ConditionType) interface{} {
	if c := conditionsv1alpha1.Get(obj, t); c != nil {
		return string(c.Status)
	}
	return nil
}
