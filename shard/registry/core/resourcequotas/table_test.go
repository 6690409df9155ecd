package resourcequotas

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTableConvertor(t *testing.T) {
	rq := newQuota(func(rq *corev1.ResourceQuota) {
		rq.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
		rq.Status.Hard = list("pods", "10", "requests.cpu", "4", "limits.memory", "8Gi", "limits.cpu", "8")
		rq.Status.Used = list("pods", "3", "requests.cpu", "500m", "limits.cpu", "1")
	})
	table, err := TableConvertor().ConvertToTable(t.Context(), rq, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Age", "Request", "Limit"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	want := []interface{}{"compute", "10d", "pods: 3/10, requests.cpu: 500m/4", "limits.cpu: 1/8, limits.memory: 0/8Gi"}
	if diff := cmp.Diff(want, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
