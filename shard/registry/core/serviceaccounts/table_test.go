package serviceaccounts

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTableConvertor(t *testing.T) {
	sa := newServiceAccount(func(sa *corev1.ServiceAccount) {
		sa.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
		sa.Secrets = []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}
	})
	table, err := TableConvertor().ConvertToTable(t.Context(), sa, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Secrets", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"builder", int64(2), "10d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "1" {
		t.Errorf("resourceVersion %q, want 1", table.ResourceVersion)
	}
}
