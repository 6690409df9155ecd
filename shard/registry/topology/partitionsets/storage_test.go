package partitionsets

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("topology.kcp.io/partitionsets"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "partitionsets",
		GroupVersion: "topology.kcp.io/v1alpha1",
		Singular:     "partitionset",
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*topologyv1alpha1.PartitionSet); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	counted := cloudRegion(func(s *topologyv1alpha1.PartitionSet) {
		s.Status.Count = 10
		s.CreationTimestamp = metav1.NewTime(time.Now().Add(-3 * time.Hour))
	})
	fresh := cloudRegion(func(s *topologyv1alpha1.PartitionSet) {
		s.Name = "fresh"
		s.CreationTimestamp = metav1.NewTime(time.Now().Add(-5 * time.Minute))
	})
	list := &topologyv1alpha1.PartitionSetList{ListMeta: metav1.ListMeta{ResourceVersion: "3"}, Items: []topologyv1alpha1.PartitionSet{*counted, *fresh}}
	table := storetest.Table{
		Columns:         []string{"Name:string", "Count:string", "Age:date"},
		ResourceVersion: "3",
		Rows:            [][]interface{}{{"cloud-region", "10", "3h"}, {"fresh", nil, "5m"}},
	}.Check(t, tableConvertor(), list)
	if d := table.ColumnDefinitions[1].Description; d != "Count of the partitions belonging the PartitionSet" {
		t.Errorf("description of Count: %q", d)
	}
}
