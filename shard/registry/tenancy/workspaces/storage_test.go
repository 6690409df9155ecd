package workspaces

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
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
)

// noStorage returns a RESTOptionsGetter that builds no storage: the tests
// check what NewStorage wires, not what etcd does.
func noStorage() generic.RESTOptionsGetter {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: "tenancy.kcp.io/workspaces",
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
	if got := slices.Sorted(maps.Keys(storages)); !slices.Equal(got, []string{"workspaces", "workspaces/status"}) {
		t.Fatalf("storages %v", got)
	}

	main := storages["workspaces"]
	if _, ok := main.New().(*tenancyv1alpha1.Workspace); !ok {
		t.Errorf("new object %T", main.New())
	}
	if s, ok := main.(rest.Scoper); !ok || s.NamespaceScoped() {
		t.Error("workspaces are not cluster-scoped")
	}
	if s, ok := main.(rest.ShortNamesProvider); !ok || !slices.Equal(s.ShortNames(), []string{"ws"}) {
		t.Error("short name is not ws")
	}
	if c, ok := main.(rest.CategoriesProvider); !ok || !slices.Equal(c.Categories(), []string{"kcp"}) {
		t.Error("category is not kcp")
	}
	if s, ok := main.(rest.SingularNameProvider); !ok || s.GetSingularName() != "workspace" {
		t.Error("singular name is not workspace")
	}

	status, ok := storages["workspaces/status"].(interface {
		rest.Getter
		rest.Updater
		rest.ResetFieldsStrategy
	})
	if !ok {
		t.Fatalf("status storage %T cannot get, update and reset fields", storages["workspaces/status"])
	}
	if reset := status.GetResetFields()["tenancy.kcp.io/v1alpha1"]; reset == nil || !reset.Has(fieldpath.MakePathOrDie("spec")) {
		t.Errorf("status writes reset %v, want spec among them", reset)
	}
}

func TestTableConvertor(t *testing.T) {
	ws := newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
		ws.CreationTimestamp = metav1.NewTime(time.Now().Add(-3 * time.Hour))
		ws.Spec.URL = "https://proxy/clusters/abc"
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	})
	untyped := newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
		ws.Name = "new"
		ws.Spec.Type = nil
		ws.CreationTimestamp = metav1.NewTime(time.Now().Add(-5 * time.Minute))
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseScheduling
	})
	list := &tenancyv1alpha1.WorkspaceList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []tenancyv1alpha1.Workspace{*ws, *untyped}}
	table, err := tableConvertor().ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Type", "Phase", "URL", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != "9" || len(table.Rows) != 2 {
		t.Fatalf("resourceVersion %q and %d rows, want 9 and 2", table.ResourceVersion, len(table.Rows))
	}
	if diff := cmp.Diff([]interface{}{"team", "universal", "Ready", "https://proxy/clusters/abc", "3h"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"new", "", "Scheduling", "", "5m"}, table.Rows[1].Cells); diff != "" {
		t.Errorf("cells of a workspace without type (-want +got):\n%s", diff)
	}
	if _, err := tableConvertor().ConvertToTable(t.Context(), &metav1.Status{}, nil); err == nil {
		t.Error("printing a Status: want an error")
	}
}
