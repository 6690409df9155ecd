package configmaps

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTableConvertor(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	list := &corev1.ConfigMapList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42"},
		Items: []corev1.ConfigMap{{
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default", CreationTimestamp: created},
			Data:       map[string]string{"a": "1", "b": "2"},
			BinaryData: map[string][]byte{"c": nil},
		}},
	}
	table, err := TableConvertor().ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Data", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "42" {
		t.Errorf("resourceVersion %q, want 42", table.ResourceVersion)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	row := table.Rows[0]
	if diff := cmp.Diff([]interface{}{"settings", int64(3), "10d"}, row.Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if _, ok := row.Object.Object.(*corev1.ConfigMap); !ok {
		t.Errorf("row object %T, want the configmap", row.Object.Object)
	}

	noHeaders, err := TableConvertor().ConvertToTable(t.Context(), &list.Items[0], &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(noHeaders.ColumnDefinitions) != 0 || len(noHeaders.Rows) != 1 {
		t.Errorf("noHeaders: %d columns and %d rows, want 0 and 1", len(noHeaders.ColumnDefinitions), len(noHeaders.Rows))
	}

	if _, err := TableConvertor().ConvertToTable(t.Context(), &corev1.Secret{}, nil); err == nil {
		t.Error("converting a secret: want an error")
	}
}
