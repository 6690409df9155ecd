package rbac

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Cache audit (issue 9): cluster-keyed: every index key starts with the
// binding's logical cluster.
//
// SubjectIndex indexes RoleBindings and ClusterRoleBindings by logical
// cluster, namespace and subject (see SubjectIndexFunc).
const SubjectIndex = "rbac-subject"

// SubjectIndexers returns SubjectIndex, for the binding informers.
func SubjectIndexers() cache.Indexers {
	return cache.Indexers{SubjectIndex: SubjectIndexFunc}
}

// EnsureIndexers adds indexers to informer unless it has an index of the
// same name already, so that several users of one shared informer can ask
// for the same index.
func EnsureIndexers(informer cache.SharedIndexInformer, indexers cache.Indexers) error {
	existing := informer.GetIndexer().GetIndexers()
	missing := cache.Indexers{}
	for name, fn := range indexers {
		if _, ok := existing[name]; !ok {
			missing[name] = fn
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := informer.AddIndexers(missing); err != nil {
		return fmt.Errorf("adding RBAC indexes: %w", err)
	}
	return nil
}

// SubjectIndexFunc indexes a RoleBinding or ClusterRoleBinding under one
// key per subject that can apply to a user: cluster|namespace|Kind:name,
// with the binding's namespace (empty for ClusterRoleBindings) and, for
// service accounts, "ServiceAccount:namespace/name" where the namespace
// defaults to the binding's. Subjects that never apply (unknown kinds,
// service accounts without a namespace in ClusterRoleBindings) are not
// indexed.
func SubjectIndexFunc(obj any) ([]string, error) {
	var (
		cluster   logicalcluster.Name
		namespace string
		subjects  []rbacv1.Subject
	)
	switch b := obj.(type) {
	case *rbacv1.RoleBinding:
		cluster, namespace, subjects = logicalcluster.From(b), b.Namespace, b.Subjects
	case *rbacv1.ClusterRoleBinding:
		cluster, subjects = logicalcluster.From(b), b.Subjects
	default:
		return nil, fmt.Errorf("cannot index %T by RBAC subject", obj)
	}
	keys := make([]string, 0, len(subjects))
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind, rbacv1.GroupKind:
			keys = append(keys, subjectKey(cluster, namespace, s.Kind, s.Name))
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = namespace
			}
			if ns != "" {
				keys = append(keys, subjectKey(cluster, namespace, s.Kind, ns+"/"+s.Name))
			}
		}
	}
	return keys, nil
}

// userSubjectKeys returns the SubjectIndex keys under which bindings of a
// namespace of cluster ("" for ClusterRoleBindings) that name u are
// indexed: its user name, each group, and its service account.
func userSubjectKeys(cluster logicalcluster.Name, namespace string, u user.Info) []string {
	groups := u.GetGroups()
	keys := make([]string, 0, len(groups)+2)
	keys = append(keys, subjectKey(cluster, namespace, rbacv1.UserKind, u.GetName()))
	for _, g := range groups {
		keys = append(keys, subjectKey(cluster, namespace, rbacv1.GroupKind, g))
	}
	if strings.HasPrefix(u.GetName(), serviceaccount.ServiceAccountUsernamePrefix) {
		if ns, name, err := serviceaccount.SplitUsername(u.GetName()); err == nil {
			keys = append(keys, subjectKey(cluster, namespace, rbacv1.ServiceAccountKind, ns+"/"+name))
		}
	}
	return keys
}

// subjectKey is one SubjectIndex key.
func subjectKey(cluster logicalcluster.Name, namespace, kind, name string) string {
	var b strings.Builder
	b.Grow(len(cluster) + len(namespace) + len(kind) + len(name) + 3)
	b.WriteString(string(cluster))
	b.WriteByte('|')
	b.WriteString(namespace)
	b.WriteByte('|')
	b.WriteString(kind)
	b.WriteByte(':')
	b.WriteString(name)
	return b.String()
}
