// Package storetest holds test helpers for registries built on
// shard/registry/store: what NewStorage wires, without etcd, and what their
// strategies and table convertors return.
package storetest

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// NoStorage returns a RESTOptionsGetter that builds no storage: tests that
// use it check what NewStorage wires, not what etcd does.
func NoStorage(resourcePrefix string) generic.RESTOptionsGetter {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: resourcePrefix,
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object, func() runtime.Object,
			storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
	}
}

// ClusterScoped is what NewStorage must wire for a cluster-scoped resource
// without subresources.
type ClusterScoped struct {
	// Resource is the plural resource name, e.g. partitions.
	Resource   string
	Singular   string
	ShortNames []string
	Categories []string
	// IsNew tells whether New() returned the right type.
	IsNew func(runtime.Object) bool
}

// Check fails t unless storages wires want: exactly the resource,
// cluster-scoped, with the names and categories.
func (want ClusterScoped) Check(t *testing.T, storages map[string]rest.Storage) {
	t.Helper()
	if got := slices.Sorted(maps.Keys(storages)); !slices.Equal(got, []string{want.Resource}) {
		t.Fatalf("storages %v", got)
	}
	want.checkMain(t, storages[want.Resource])
}

func (want ClusterScoped) checkMain(t *testing.T, main rest.Storage) {
	t.Helper()
	if !want.IsNew(main.New()) {
		t.Errorf("new object %T", main.New())
	}
	if s, ok := main.(rest.Scoper); !ok || s.NamespaceScoped() {
		t.Errorf("%s are not cluster-scoped", want.Resource)
	}
	if s, ok := main.(rest.ShortNamesProvider); !ok || !slices.Equal(s.ShortNames(), want.ShortNames) {
		t.Errorf("short names of %s are not %v", want.Resource, want.ShortNames)
	}
	if c, ok := main.(rest.CategoriesProvider); !ok || !slices.Equal(c.Categories(), want.Categories) {
		t.Errorf("categories of %s are not %v", want.Resource, want.Categories)
	}
	if s, ok := main.(rest.SingularNameProvider); !ok || s.GetSingularName() != want.Singular {
		t.Errorf("singular name is not %s", want.Singular)
	}
}

// ClusterScopedWithStatus is what NewStorage must wire for a cluster-scoped
// resource with a status subresource.
type ClusterScopedWithStatus struct {
	// Resource is the plural resource name, e.g. workspaces.
	Resource string
	// GroupVersion is the group version whose reset fields are checked.
	GroupVersion string
	Singular     string
	ShortNames   []string
	Categories   []string
	// IsNew tells whether New() returned the right type.
	IsNew func(runtime.Object) bool
}

// Check fails t unless storages wires want: exactly the resource and its
// status, cluster-scoped, with the names and categories, and a status
// storage that gets, updates and resets spec.
func (want ClusterScopedWithStatus) Check(t *testing.T, storages map[string]rest.Storage) {
	t.Helper()
	status := want.Resource + "/status"
	if got := slices.Sorted(maps.Keys(storages)); !slices.Equal(got, []string{want.Resource, status}) {
		t.Fatalf("storages %v", got)
	}
	ClusterScoped{Resource: want.Resource, Singular: want.Singular, ShortNames: want.ShortNames, Categories: want.Categories, IsNew: want.IsNew}.
		checkMain(t, storages[want.Resource])
	st, ok := storages[status].(interface {
		rest.Getter
		rest.Updater
		rest.ResetFieldsStrategy
	})
	if !ok {
		t.Fatalf("status storage %T cannot get, update and reset fields", storages[status])
	}
	if reset := st.GetResetFields()[fieldpath.APIVersion(want.GroupVersion)]; reset == nil || !reset.Has(fieldpath.MakePathOrDie("spec")) {
		t.Errorf("status writes reset %v, want spec among them", reset)
	}
}

// Fields returns "<type> <field>" of each error, e.g.
// "FieldValueRequired spec.name", for a table test to compare.
func Fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

// CheckStatusResetFields fails t unless, in version gv, writes through
// main reset the status and not the spec, and writes through status reset
// the spec and the metadata and not the status: the reset fields of a
// resource with a status subresource (store.WithStatus).
func CheckStatusResetFields(t *testing.T, gv string, main, status rest.ResetFieldsStrategy) {
	t.Helper()
	version := fieldpath.APIVersion(gv)
	has := func(set *fieldpath.Set, name string) bool { return set.Has(fieldpath.MakePathOrDie(name)) }
	if got := main.GetResetFields()[version]; got == nil || !has(got, "status") || has(got, "spec") {
		t.Errorf("writes reset %v, want status", got)
	}
	if got := status.GetResetFields()[version]; got == nil || !has(got, "spec") || !has(got, "metadata") || has(got, "status") {
		t.Errorf("status writes reset %v, want spec and metadata", got)
	}
}

// Table is what a TableConvertor must print for a list.
type Table struct {
	// Columns are "<name>:<type>" of each column, e.g. "Age:date".
	Columns         []string
	ResourceVersion string
	// Rows are the cells of each row; nil for an empty cell.
	Rows [][]interface{}
}

// Check fails t unless convertor prints list as want, and returns the
// table for further checks.
func (want Table) Check(t *testing.T, convertor rest.TableConvertor, list runtime.Object) *metav1.Table {
	t.Helper()
	table, err := convertor.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name+":"+c.Type)
	}
	if diff := cmp.Diff(want.Columns, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ResourceVersion != want.ResourceVersion || len(table.Rows) != len(want.Rows) {
		t.Fatalf("resourceVersion %q and %d rows, want %s and %d", table.ResourceVersion, len(table.Rows), want.ResourceVersion, len(want.Rows))
	}
	for i, row := range want.Rows {
		if diff := cmp.Diff(row, table.Rows[i].Cells); diff != "" {
			t.Errorf("cells of row %d (-want +got):\n%s", i, diff)
		}
	}
	return table
}
