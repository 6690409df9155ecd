package partitions

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("topology.kcp.io/partitions"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScoped{
		Resource:   "partitions",
		Singular:   "partition",
		Categories: []string{"kcp"},
		IsNew:      func(o runtime.Object) bool { _, ok := o.(*topologyv1alpha1.Partition); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	generated := europe(func(p *topologyv1alpha1.Partition) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "topology.kcp.io/v1alpha1", Kind: "PartitionSet", Name: "cloud-region", UID: "u"}}
		p.CreationTimestamp = metav1.NewTime(time.Now().Add(-3 * time.Hour))
	})
	manual := europe(func(p *topologyv1alpha1.Partition) {
		p.Name = "by-hand"
		p.CreationTimestamp = metav1.NewTime(time.Now().Add(-30 * time.Second))
	})
	list := &topologyv1alpha1.PartitionList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []topologyv1alpha1.Partition{*generated, *manual}}
	table, err := tableConvertor().ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name+":"+c.Type)
	}
	if diff := cmp.Diff([]string{"Name:string", "Owner:string", "Age:date"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "7" || len(table.Rows) != 2 {
		t.Fatalf("resourceVersion %q and %d rows, want 7 and 2", table.ResourceVersion, len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"cloud-region-gcp-europe-xdfgs", "cloud-region", "3h"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"by-hand", nil, "30s"}, table.Rows[1].Cells); diff != "" {
		t.Errorf("cells of a partition without owner (-want +got):\n%s", diff)
	}
}
