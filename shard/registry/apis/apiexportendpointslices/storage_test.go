package apiexportendpointslices

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("apis.kcp.io/apiexportendpointslices"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "apiexportendpointslices",
		GroupVersion: "apis.kcp.io/v1alpha1",
		Singular:     "apiexportendpointslice",
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*apisv1alpha1.APIExportEndpointSlice); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	eu := cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) {
		s.CreationTimestamp = metav1.NewTime(time.Now().Add(-3 * time.Hour))
	})
	all := cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) {
		s.Name, s.Spec.Partition = "cowboys", ""
		s.CreationTimestamp = metav1.NewTime(time.Now().Add(-5 * time.Minute))
	})
	list := &apisv1alpha1.APIExportEndpointSliceList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []apisv1alpha1.APIExportEndpointSlice{*eu, *all}}
	table, err := tableConvertor().ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name+":"+c.Type)
	}
	if diff := cmp.Diff([]string{"Name:string", "Export:string", "Partition:string", "Age:date"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "9" || len(table.Rows) != 2 {
		t.Fatalf("resourceVersion %q and %d rows, want 9 and 2", table.ResourceVersion, len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"cowboys-eu", "today-cowboys", "eu", "3h"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"cowboys", "today-cowboys", nil, "5m"}, table.Rows[1].Cells); diff != "" {
		t.Errorf("cells of a slice without partition (-want +got):\n%s", diff)
	}
}
