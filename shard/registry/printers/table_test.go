package printers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

func convertor() TableConvertor[*corev1.ConfigMap] {
	return TableConvertor[*corev1.ConfigMap]{
		Columns: []metav1.TableColumnDefinition{NameColumn(), CreatedAtColumn()},
		Cells: func(cm *corev1.ConfigMap) []interface{} {
			return []interface{}{cm.Name, CreatedAt(cm.CreationTimestamp)}
		},
	}
}

func TestConvertList(t *testing.T) {
	remaining := int64(7)
	created := metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600)))
	list := &corev1.ConfigMapList{
		ListMeta: metav1.ListMeta{ResourceVersion: "12", Continue: "next", RemainingItemCount: &remaining},
		Items: []corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: created}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: created}},
		},
	}
	table, err := convertor().ConvertToTable(t.Context(), list, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if table.ResourceVersion != "12" || table.Continue != "next" || table.RemainingItemCount == nil || *table.RemainingItemCount != 7 {
		t.Errorf("list metadata: %+v", table.ListMeta)
	}
	if len(table.ColumnDefinitions) != 2 || table.ColumnDefinitions[0].Format != "name" || table.ColumnDefinitions[1].Type != "date" {
		t.Errorf("columns: %+v", table.ColumnDefinitions)
	}
	if len(table.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"b", "2026-03-04T04:06:07Z"}, table.Rows[1].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	// Each row carries its own item, for the API server to turn into
	// PartialObjectMetadata.
	if row, ok := table.Rows[1].Object.Object.(*corev1.ConfigMap); !ok || row.Name != "b" {
		t.Errorf("row object %#v", table.Rows[1].Object.Object)
	}
}

func TestConvertSingle(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "3"}}
	table, err := convertor().ConvertToTable(t.Context(), cm, &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if table.ResourceVersion != "3" || len(table.ColumnDefinitions) != 0 || len(table.Rows) != 1 {
		t.Errorf("table: %+v", table)
	}
}

func TestConvertErrors(t *testing.T) {
	if _, err := convertor().ConvertToTable(t.Context(), &corev1.Secret{}, nil); err == nil {
		t.Error("converting a secret: want an error")
	}
	broken := convertor()
	broken.Cells = func(*corev1.ConfigMap) []interface{} { return []interface{}{"only one"} }
	if _, err := broken.ConvertToTable(t.Context(), &corev1.ConfigMap{}, nil); err == nil {
		t.Error("row with too few cells: want an error")
	}
}

func TestFormatting(t *testing.T) {
	if got := Age(metav1.Time{}); got != "<unknown>" {
		t.Errorf("Age(zero) = %q", got)
	}
	if got := Age(metav1.NewTime(time.Now().Add(-3 * 24 * time.Hour))); got != "3d" {
		t.Errorf("Age(3 days ago) = %q", got)
	}
	if got := MicroAge(metav1.NewMicroTime(time.Now().Add(-90 * time.Second))); got != "90s" {
		t.Errorf("MicroAge(90s ago) = %q", got)
	}
	if got := MicroAge(metav1.MicroTime{}); got != "<unknown>" {
		t.Errorf("MicroAge(zero) = %q", got)
	}
	if OrNone("") != "<none>" || OrNone("x") != "x" {
		t.Error("OrNone")
	}
}

// conditioned is an object with conditions.
type conditioned conditionsv1alpha1.Conditions

func (c conditioned) GetConditions() conditionsv1alpha1.Conditions {
	return conditionsv1alpha1.Conditions(c)
}

func TestConditionStatus(t *testing.T) {
	obj := conditioned{{Type: "Ready", Status: corev1.ConditionFalse}, {Type: "Other", Status: corev1.ConditionTrue}}
	if got := ConditionStatus(obj, "Ready"); got != "False" {
		t.Errorf("Ready: %v, want False", got)
	}
	if got := ConditionStatus(obj, "Missing"); got != nil {
		t.Errorf("a missing condition: %#v, want nil", got)
	}
}

func TestCRDColumn(t *testing.T) {
	want := metav1.TableColumnDefinition{Name: "Age", Type: "date", Description: "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp"}
	if diff := cmp.Diff(want, CRDColumn("Age", "date", ".metadata.creationTimestamp")); diff != "" {
		t.Errorf("column (-want +got):\n%s", diff)
	}
}
