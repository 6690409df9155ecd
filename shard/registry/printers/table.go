// Package printers turns built-in API objects into the metav1.Table that
// `kubectl get` prints: the columns Kubernetes' own printers show, one row per
// object, and the object itself in each row so the API server can return it
// as PartialObjectMetadata when the client asks for that.
package printers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// TableConvertor converts objects of type T, or lists of them, into tables.
// It implements rest.TableConvertor.
type TableConvertor[T runtime.Object] struct {
	// Columns describes every cell of a row, in order. Columns with a
	// non-zero Priority are shown by kubectl only with -o wide.
	Columns []metav1.TableColumnDefinition
	// Cells returns the cells of the row for one object, one per column.
	Cells func(obj T) []interface{}
	// Conditions, if set, returns the conditions of the row for one object
	// (Kubernetes marks the rows of finished pods Completed).
	Conditions func(obj T) []metav1.TableRowCondition
}

var _ rest.TableConvertor = TableConvertor[runtime.Object]{}

// ConvertToTable returns one row per object in object. Each row carries the
// object itself; the API server replaces it by PartialObjectMetadata or drops
// it according to the request's includeObject parameter.
func (c TableConvertor[T]) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	addRow := func(obj runtime.Object) error {
		typed, ok := obj.(T)
		if !ok {
			var want T
			return fmt.Errorf("cannot print %T in a table of %T", obj, want)
		}
		cells := c.Cells(typed)
		if len(cells) != len(c.Columns) {
			return fmt.Errorf("printing %T: %d cells for %d columns", obj, len(cells), len(c.Columns))
		}
		row := metav1.TableRow{
			Cells:  cells,
			Object: runtime.RawExtension{Object: obj},
		}
		if c.Conditions != nil {
			row.Conditions = c.Conditions(typed)
		}
		table.Rows = append(table.Rows, row)
		return nil
	}

	if meta.IsListType(object) {
		if err := meta.EachListItem(object, addRow); err != nil {
			return nil, err
		}
		if list, err := meta.ListAccessor(object); err == nil {
			table.ResourceVersion = list.GetResourceVersion()
			table.Continue = list.GetContinue()
			table.RemainingItemCount = list.GetRemainingItemCount()
		}
	} else {
		if err := addRow(object); err != nil {
			return nil, err
		}
		if m, err := meta.CommonAccessor(object); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
	}

	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = c.Columns
	}
	return table, nil
}
