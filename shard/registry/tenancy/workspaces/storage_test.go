package workspaces

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("tenancy.kcp.io/workspaces"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "workspaces",
		GroupVersion: "tenancy.kcp.io/v1alpha1",
		Singular:     "workspace",
		ShortNames:   []string{"ws"},
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*tenancyv1alpha1.Workspace); return ok },
	}.Check(t, storages)
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
