package rbac

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
)

// AppliesTo tells whether one of subjects names u, and which. namespace is
// the namespace of a RoleBinding (empty for a ClusterRoleBinding): a
// ServiceAccount subject without a namespace stands for the service account
// of that name in it.
func AppliesTo(u user.Info, subjects []rbacv1.Subject, namespace string) (int, bool) {
	for i := range subjects {
		if subjectMatches(u, &subjects[i], namespace) {
			return i, true
		}
	}
	return 0, false
}

// subjectMatches tells whether one subject names u.
func subjectMatches(u user.Info, s *rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return u.GetName() == s.Name
	case rbacv1.GroupKind:
		return slices.Contains(u.GetGroups(), s.Name)
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = namespace
		}
		return ns != "" && serviceaccount.MatchesUsername(ns, s.Name, u.GetName())
	default:
		return false
	}
}

// describeSubject names a subject in reasons the way Kubernetes does:
// `User "alice"`, `ServiceAccount "builder/ci"` (name/namespace).
func describeSubject(s *rbacv1.Subject, bindingNamespace string) string {
	if s.Kind != rbacv1.ServiceAccountKind {
		return fmt.Sprintf("%s %q", s.Kind, s.Name)
	}
	ns := s.Namespace
	if ns == "" {
		ns = bindingNamespace
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
}

// clusterRoleBindingSource describes the ClusterRoleBinding a rule comes
// from.
type clusterRoleBindingSource struct {
	binding *rbacv1.ClusterRoleBinding
	subject *rbacv1.Subject
}

func (d clusterRoleBindingSource) String() string {
	return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s",
		d.binding.Name, d.binding.RoleRef.Kind, d.binding.RoleRef.Name, describeSubject(d.subject, ""))
}

// roleBindingSource describes the RoleBinding a rule comes from.
type roleBindingSource struct {
	binding *rbacv1.RoleBinding
	subject *rbacv1.Subject
}

func (d roleBindingSource) String() string {
	return fmt.Sprintf("RoleBinding %q of %s %q to %s",
		d.binding.Name+"/"+d.binding.Namespace, d.binding.RoleRef.Kind, d.binding.RoleRef.Name, describeSubject(d.subject, d.binding.Namespace))
}
