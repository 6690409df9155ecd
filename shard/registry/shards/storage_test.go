package shards

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
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("core.kcp.io/shards"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "shards",
		GroupVersion: "core.kcp.io/v1alpha1",
		Singular:     "shard",
		ShortNames:   nil,
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*corev1alpha1.Shard); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	shard := newShard(func(s *corev1alpha1.Shard) {
		s.Labels = map[string]string{corev1alpha1.ShardRegionLabelKey: "eu-west"}
		s.Spec.ExternalURL = "https://proxy.example.com"
		s.CreationTimestamp = metav1.NewTime(time.Now().Add(-90 * time.Second))
	})
	list := &corev1alpha1.ShardList{ListMeta: metav1.ListMeta{ResourceVersion: "4"}, Items: []corev1alpha1.Shard{*shard}}
	table, err := tableConvertor().ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Region", "URL", "External URL", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "4" || len(table.Rows) != 1 {
		t.Fatalf("resourceVersion %q and %d rows, want 4 and 1", table.ResourceVersion, len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"root", "eu-west", "https://root.shard:6443", "https://proxy.example.com", "90s"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
