package workspacetypes

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

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
)

// noStorage returns a RESTOptionsGetter that builds no storage: the tests
// check what NewStorage wires, not what etcd does.
func noStorage() generic.RESTOptionsGetter {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: "tenancy.kcp.io/workspacetypes",
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
	if got := slices.Sorted(maps.Keys(storages)); !slices.Equal(got, []string{"workspacetypes", "workspacetypes/status"}) {
		t.Fatalf("storages %v", got)
	}

	main := storages["workspacetypes"]
	if _, ok := main.New().(*tenancyv1alpha1.WorkspaceType); !ok {
		t.Errorf("new object %T", main.New())
	}
	if s, ok := main.(rest.Scoper); !ok || s.NamespaceScoped() {
		t.Error("workspacetypes are not cluster-scoped")
	}
	if s, ok := main.(rest.ShortNamesProvider); !ok || len(s.ShortNames()) != 0 {
		t.Error("workspacetypes have short names")
	}
	if c, ok := main.(rest.CategoriesProvider); !ok || !slices.Equal(c.Categories(), []string{"kcp"}) {
		t.Error("category is not kcp")
	}
	if s, ok := main.(rest.SingularNameProvider); !ok || s.GetSingularName() != "workspacetype" {
		t.Error("singular name is not workspacetype")
	}

	status, ok := storages["workspacetypes/status"].(interface {
		rest.Getter
		rest.Updater
		rest.ResetFieldsStrategy
	})
	if !ok {
		t.Fatalf("status storage %T cannot get, update and reset fields", storages["workspacetypes/status"])
	}
	if reset := status.GetResetFields()["tenancy.kcp.io/v1alpha1"]; reset == nil || !reset.Has(fieldpath.MakePathOrDie("spec")) {
		t.Errorf("status writes reset %v, want spec among them", reset)
	}
}

func TestTableConvertor(t *testing.T) {
	wt := newType(func(wt *tenancyv1alpha1.WorkspaceType) {
		wt.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * 24 * time.Hour))
	})
	table, err := tableConvertor().ConvertToTable(t.Context(), wt, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"team", "2d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
