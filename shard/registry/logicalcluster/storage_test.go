package logicalcluster

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

// noStorage returns a RESTOptionsGetter that builds no storage: the tests
// check what NewStorage wires, not what etcd does.
func noStorage() generic.RESTOptionsGetter {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: "core.kcp.io/logicalclusters",
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object, func() runtime.Object,
			storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
	}
}

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), noStorage())
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(storages)); !slices.Equal(got, []string{"logicalclusters", "logicalclusters/status"}) {
		t.Fatalf("storages %v", got)
	}

	main := storages["logicalclusters"]
	if _, ok := main.New().(*corev1alpha1.LogicalCluster); !ok {
		t.Errorf("new object %T", main.New())
	}
	if s, ok := main.(rest.Scoper); !ok || s.NamespaceScoped() {
		t.Error("logicalclusters are not cluster-scoped")
	}
	if s, ok := main.(rest.ShortNamesProvider); !ok || !slices.Equal(s.ShortNames(), []string{"lc"}) {
		t.Error("short name is not lc")
	}
	if c, ok := main.(rest.CategoriesProvider); !ok || !slices.Equal(c.Categories(), []string{"kcp"}) {
		t.Error("category is not kcp")
	}
	if s, ok := main.(rest.SingularNameProvider); !ok || s.GetSingularName() != "logicalcluster" {
		t.Error("singular name is not logicalcluster")
	}

	status, ok := storages["logicalclusters/status"].(interface {
		rest.Getter
		rest.Updater
		rest.ResetFieldsStrategy
	})
	if !ok {
		t.Fatalf("status storage %T cannot get, update and reset fields", storages["logicalclusters/status"])
	}
	if reset := status.GetResetFields()["core.kcp.io/v1alpha1"]; reset == nil || !reset.Has(fieldpath.MakePathOrDie("spec")) {
		t.Errorf("status writes reset %v, want spec among them", reset)
	}
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
