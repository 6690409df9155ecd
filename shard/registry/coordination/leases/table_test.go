package leases

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTableConvertor(t *testing.T) {
	held := newLease(func(l *coordinationv1.Lease) {
		l.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	})
	free := newLease(func(l *coordinationv1.Lease) {
		l.Name = "free"
		l.Spec.HolderIdentity = nil
	})
	table, err := TableConvertor().ConvertToTable(t.Context(), &coordinationv1.LeaseList{Items: []coordinationv1.Lease{*held, *free}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Holder", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"controller", "shard-1_abc", "10d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"free", "", "<unknown>"}, table.Rows[1].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
