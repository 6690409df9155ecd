package logicalcluster

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("core.kcp.io/logicalclusters"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "logicalclusters",
		GroupVersion: "core.kcp.io/v1alpha1",
		Singular:     "logicalcluster",
		ShortNames:   []string{"lc"},
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*corev1alpha1.LogicalCluster); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	lc := newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
		lc.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
		lc.Status = corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady, URL: "https://shard/clusters/x"}
	})
	list := &corev1alpha1.LogicalClusterList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1alpha1.LogicalCluster{*lc}}
	table, err := tableConvertor().ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Phase", "URL", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "7" || len(table.Rows) != 1 {
		t.Fatalf("resourceVersion %q and %d rows, want 7 and 1", table.ResourceVersion, len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"cluster", "Ready", "https://shard/clusters/x", "10d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if _, err := tableConvertor().ConvertToTable(t.Context(), &metav1.Status{}, nil); err == nil {
		t.Error("printing a Status: want an error")
	}
}
