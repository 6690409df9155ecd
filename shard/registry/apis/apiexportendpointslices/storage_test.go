package apiexportendpointslices

import (
	"testing"
	"time"

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
	storetest.Table{
		Columns:         []string{"Name:string", "Export:string", "Partition:string", "Age:date"},
		ResourceVersion: "9",
		Rows:            [][]interface{}{{"cowboys-eu", "today-cowboys", "eu", "3h"}, {"cowboys", "today-cowboys", nil, "5m"}},
	}.Check(t, tableConvertor(), list)
}
