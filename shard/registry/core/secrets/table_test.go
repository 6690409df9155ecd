package secrets

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTableConvertor(t *testing.T) {
	secret := newSecret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": nil, "tls.key": nil}, func(s *corev1.Secret) {
		s.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	})
	table, err := TableConvertor().ConvertToTable(t.Context(), &corev1.SecretList{Items: []corev1.Secret{*secret}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Type", "Data", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"creds", "kubernetes.io/tls", int64(2), "10d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
