package shards

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
		ResourcePrefix: "core.kcp.io/shards",
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
	if got := slices.Sorted(maps.Keys(storages)); !slices.Equal(got, []string{"shards", "shards/status"}) {
		t.Fatalf("storages %v", got)
	}

	main := storages["shards"]
	if _, ok := main.New().(*corev1alpha1.Shard); !ok {
		t.Errorf("new object %T", main.New())
	}
	if s, ok := main.(rest.Scoper); !ok || s.NamespaceScoped() {
		t.Error("shards are not cluster-scoped")
	}
	if c, ok := main.(rest.CategoriesProvider); !ok || !slices.Equal(c.Categories(), []string{"kcp"}) {
		t.Error("category is not kcp")
	}
	if s, ok := main.(rest.SingularNameProvider); !ok || s.GetSingularName() != "shard" {
		t.Error("singular name is not shard")
	}

	status, ok := storages["shards/status"].(interface {
		rest.Getter
		rest.Updater
		rest.ResetFieldsStrategy
	})
	if !ok {
		t.Fatalf("status storage %T cannot get, update and reset fields", storages["shards/status"])
	}
	if reset := status.GetResetFields()["core.kcp.io/v1alpha1"]; reset == nil || !reset.Has(fieldpath.MakePathOrDie("spec")) {
		t.Errorf("status writes reset %v, want spec among them", reset)
	}
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
