package apiexports

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("apis.kcp.io/apiexports"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "apiexports",
		GroupVersion: "apis.kcp.io/v1alpha1",
		Singular:     "apiexport",
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*apisv1alpha1.APIExport); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	ready := cowboys(func(e *apisv1alpha1.APIExport) {
		e.CreationTimestamp = metav1.NewTime(time.Now().Add(-3 * time.Hour))
		conditionsv1alpha1.MarkTrue(e, apisv1alpha1.APIExportVirtualWorkspaceURLsReady)
	})
	fresh := cowboys(func(e *apisv1alpha1.APIExport) {
		e.Name = "fresh"
		e.CreationTimestamp = metav1.NewTime(time.Now().Add(-5 * time.Minute))
	})
	list := &apisv1alpha1.APIExportList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []apisv1alpha1.APIExport{*ready, *fresh}}
	table, err := tableConvertor().ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name+":"+c.Type)
	}
	if diff := cmp.Diff([]string{"Name:string", "Age:date", "Ready:string"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "9" || len(table.Rows) != 2 {
		t.Fatalf("resourceVersion %q and %d rows, want 9 and 2", table.ResourceVersion, len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"today-cowboys", "3h", "True"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"fresh", "5m", nil}, table.Rows[1].Cells); diff != "" {
		t.Errorf("cells of an export without condition (-want +got):\n%s", diff)
	}
}
