package apiexports

import (
	"testing"
	"time"

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
	storetest.Table{
		Columns:         []string{"Name:string", "Age:date", "Ready:string"},
		ResourceVersion: "9",
		Rows:            [][]interface{}{{"today-cowboys", "3h", "True"}, {"fresh", "5m", nil}},
	}.Check(t, tableConvertor(), list)
}
