package limitranges

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTableConvertor(t *testing.T) {
	lr := newLimitRange()
	lr.CreationTimestamp = metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	table, err := TableConvertor().ConvertToTable(t.Context(), lr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Created At"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"limits", "2026-03-04T05:06:07Z"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
