package rbac

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// RoleTableConvertor prints roles as NAME CREATED AT.
func RoleTableConvertor() printers.TableConvertor[*rbacv1.Role] {
	return printers.TableConvertor[*rbacv1.Role]{
		Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.CreatedAtColumn()},
		Cells: func(role *rbacv1.Role) []interface{} {
			return []interface{}{role.Name, printers.CreatedAt(role.CreationTimestamp)}
		},
	}
}

// ClusterRoleTableConvertor prints cluster roles as NAME CREATED AT.
func ClusterRoleTableConvertor() printers.TableConvertor[*rbacv1.ClusterRole] {
	return printers.TableConvertor[*rbacv1.ClusterRole]{
		Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.CreatedAtColumn()},
		Cells: func(role *rbacv1.ClusterRole) []interface{} {
			return []interface{}{role.Name, printers.CreatedAt(role.CreationTimestamp)}
		},
	}
}

// bindingColumns are the columns of role bindings and cluster role
// bindings: NAME ROLE AGE, and with -o wide USERS GROUPS SERVICEACCOUNTS.
func bindingColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		printers.NameColumn(),
		{Name: "Role", Type: "string", Description: rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"]},
		printers.AgeColumn(),
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the roleBinding"},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the roleBinding"},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the roleBinding"},
	}
}

func bindingCells(meta metav1.ObjectMeta, ref rbacv1.RoleRef, subjects []rbacv1.Subject) []interface{} {
	var users, groups, serviceAccounts []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			serviceAccounts = append(serviceAccounts, s.Namespace+"/"+s.Name)
		}
	}
	return []interface{}{
		meta.Name,
		fmt.Sprintf("%s/%s", ref.Kind, ref.Name),
		printers.Age(meta.CreationTimestamp),
		strings.Join(users, ", "),
		strings.Join(groups, ", "),
		strings.Join(serviceAccounts, ", "),
	}
}

// RoleBindingTableConvertor prints role bindings as NAME ROLE AGE, and with
// -o wide USERS GROUPS SERVICEACCOUNTS.
func RoleBindingTableConvertor() printers.TableConvertor[*rbacv1.RoleBinding] {
	return printers.TableConvertor[*rbacv1.RoleBinding]{
		Columns: bindingColumns(),
		Cells: func(rb *rbacv1.RoleBinding) []interface{} {
			return bindingCells(rb.ObjectMeta, rb.RoleRef, rb.Subjects)
		},
	}
}

// ClusterRoleBindingTableConvertor prints cluster role bindings like role
// bindings.
func ClusterRoleBindingTableConvertor() printers.TableConvertor[*rbacv1.ClusterRoleBinding] {
	return printers.TableConvertor[*rbacv1.ClusterRoleBinding]{
		Columns: bindingColumns(),
		Cells: func(crb *rbacv1.ClusterRoleBinding) []interface{} {
			return bindingCells(crb.ObjectMeta, crb.RoleRef, crb.Subjects)
		},
	}
}
