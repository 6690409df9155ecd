package rbac

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func columnNames(table *metav1.Table) []string {
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}

func TestTableConvertors(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "default", CreationTimestamp: created}}
	table, err := RoleTableConvertor().ConvertToTable(t.Context(), role, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Name", "Created At"}, columnNames(table)); diff != "" {
		t.Errorf("role columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"reader", "2026-03-04T05:06:07Z"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("role cells (-want +got):\n%s", diff)
	}

	clusterRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view", CreationTimestamp: created}}
	table, err = ClusterRoleTableConvertor().ConvertToTable(t.Context(), clusterRole, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"view", "2026-03-04T05:06:07Z"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cluster role cells (-want +got):\n%s", diff)
	}

	subjects := []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.UserKind, Name: "bob"},
		{Kind: rbacv1.GroupKind, Name: "devs"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "builder"},
	}
	tenDays := metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: "default", CreationTimestamp: tenDays},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   subjects,
	}
	table, err = RoleBindingTableConvertor().ConvertToTable(t.Context(), &rbacv1.RoleBindingList{Items: []rbacv1.RoleBinding{*rb}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"}, columnNames(table)); diff != "" {
		t.Errorf("role binding columns (-want +got):\n%s", diff)
	}
	for _, c := range table.ColumnDefinitions[3:] {
		if c.Priority != 1 {
			t.Errorf("column %s is not wide-only", c.Name)
		}
	}
	want := []interface{}{"read", "ClusterRole/view", "10d", "alice, bob", "devs", "ci/builder"}
	if diff := cmp.Diff(want, table.Rows[0].Cells); diff != "" {
		t.Errorf("role binding cells (-want +got):\n%s", diff)
	}

	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "admins", CreationTimestamp: tenDays}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}}
	table, err = ClusterRoleBindingTableConvertor().ConvertToTable(t.Context(), crb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"admins", "ClusterRole/cluster-admin", "10d", "", "", ""}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cluster role binding cells (-want +got):\n%s", diff)
	}
}
