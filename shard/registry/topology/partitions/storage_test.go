package partitions

import (
	"testing"
	"time"

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
	storetest.Table{
		Columns:         []string{"Name:string", "Owner:string", "Age:date"},
		ResourceVersion: "7",
		Rows:            [][]interface{}{{"cloud-region-gcp-europe-xdfgs", "cloud-region", "3h"}, {"by-hand", nil, "30s"}},
	}.Check(t, tableConvertor(), list)
}
