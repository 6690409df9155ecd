package logicalcluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

type tableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the LogicalCluster (always cluster)"},
	{Name: "Phase", Type: "string", Description: "The current phase (e.g. Scheduling, Initializing, Ready)"},
	{Name: "URL", Type: "string", Description: "URL to access the logical cluster"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
}

func (tableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	t := &metav1.Table{ColumnDefinitions: columns}
	if m, err := meta.ListAccessor(obj); err == nil {
		t.ResourceVersion, t.Continue, t.RemainingItemCount = m.GetResourceVersion(), m.GetContinue(), m.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(obj); err == nil {
		t.ResourceVersion = m.GetResourceVersion()
	}
	var items []corev1alpha1.LogicalCluster
	switch o := obj.(type) {
	case *corev1alpha1.LogicalCluster:
		items = []corev1alpha1.LogicalCluster{*o}
	case *corev1alpha1.LogicalClusterList:
		items = o.Items
	default:
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	for i := range items {
		lc := &items[i]
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []interface{}{lc.Name, string(lc.Status.Phase), lc.Status.URL, age(lc.CreationTimestamp)},
			Object: runtime.RawExtension{Object: lc},
		})
	}
	return t, nil
}

func age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}
