package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// SetRoleBindingDefaults defaults roleRef.apiGroup and the apiGroup of
// subjects of a role binding.
func SetRoleBindingDefaults(rb *rbacv1.RoleBinding) {
	setRoleRefDefaults(&rb.RoleRef)
	for i := range rb.Subjects {
		setSubjectDefaults(&rb.Subjects[i])
	}
}

// SetClusterRoleBindingDefaults defaults roleRef.apiGroup and the apiGroup
// of subjects of a cluster role binding.
func SetClusterRoleBindingDefaults(crb *rbacv1.ClusterRoleBinding) {
	setRoleRefDefaults(&crb.RoleRef)
	for i := range crb.Subjects {
		setSubjectDefaults(&crb.Subjects[i])
	}
}

func setRoleRefDefaults(ref *rbacv1.RoleRef) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
}

// setSubjectDefaults sets the apiGroup of users and groups to
// rbac.authorization.k8s.io; service accounts are in the core group "".
func setSubjectDefaults(subject *rbacv1.Subject) {
	if subject.APIGroup != "" {
		return
	}
	switch subject.Kind {
	case rbacv1.UserKind, rbacv1.GroupKind:
		subject.APIGroup = rbacv1.GroupName
	}
}
