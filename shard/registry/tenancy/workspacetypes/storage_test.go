package workspacetypes

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("tenancy.kcp.io/workspacetypes"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "workspacetypes",
		GroupVersion: "tenancy.kcp.io/v1alpha1",
		Singular:     "workspacetype",
		ShortNames:   nil,
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*tenancyv1alpha1.WorkspaceType); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	wt := newType(func(wt *tenancyv1alpha1.WorkspaceType) {
		wt.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * 24 * time.Hour))
	})
	table, err := tableConvertor().ConvertToTable(t.Context(), wt, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"team", "2d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
