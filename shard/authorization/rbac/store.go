package rbac

import (
	"cmp"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Store reads the RBAC objects of the logical clusters of a shard. Objects
// are shared with a cache and must not be changed.
type Store interface {
	// GetRole returns a Role of a namespace of cluster, and false if
	// there is none.
	GetRole(cluster logicalcluster.Name, namespace, name string) (*rbacv1.Role, bool, error)
	// GetClusterRole returns a ClusterRole of cluster, and false if there
	// is none.
	GetClusterRole(cluster logicalcluster.Name, name string) (*rbacv1.ClusterRole, bool, error)
	// RoleBindings returns the RoleBindings of a namespace of cluster that
	// may name u as a subject: a superset of those that do, sorted by name.
	RoleBindings(cluster logicalcluster.Name, namespace string, u user.Info) ([]*rbacv1.RoleBinding, error)
	// ClusterRoleBindings returns the ClusterRoleBindings of cluster that
	// may name u as a subject: a superset of those that do, sorted by name.
	ClusterRoleBindings(cluster logicalcluster.Name, u user.Info) ([]*rbacv1.ClusterRoleBinding, error)
}

// IndexerStore is a Store over the indexers of wildcard informers, keyed by
// informers.KeyFunc. The binding indexers must have SubjectIndex.
type IndexerStore struct {
	roles               cache.Indexer
	clusterRoles        cache.Indexer
	roleBindings        cache.Indexer
	clusterRoleBindings cache.Indexer
	synced              []cache.InformerSynced
}

var _ Store = &IndexerStore{}

// NewIndexerStore returns a Store over four indexers. roleBindings and
// clusterRoleBindings must have SubjectIndex (see SubjectIndexers); roles
// and clusterRoles need only the informers' own indexes.
func NewIndexerStore(roles, roleBindings, clusterRoles, clusterRoleBindings cache.Indexer) *IndexerStore {
	return &IndexerStore{
		roles:               roles,
		clusterRoles:        clusterRoles,
		roleBindings:        roleBindings,
		clusterRoleBindings: clusterRoleBindings,
	}
}

// NewInformerStore returns a Store over the shard's wildcard RBAC informers
// and adds SubjectIndex to the binding informers (once, however often it is
// called). Call it before f is started, or start f again after it.
func NewInformerStore(f *informers.SharedInformerFactory) (*IndexerStore, error) {
	roles, clusterRoles := f.Roles().Informer(), f.ClusterRoles().Informer()
	roleBindings, clusterRoleBindings := f.RoleBindings().Informer(), f.ClusterRoleBindings().Informer()
	for _, i := range []cache.SharedIndexInformer{roleBindings, clusterRoleBindings} {
		if err := EnsureIndexers(i, SubjectIndexers()); err != nil {
			return nil, err
		}
	}
	s := NewIndexerStore(roles.GetIndexer(), roleBindings.GetIndexer(), clusterRoles.GetIndexer(), clusterRoleBindings.GetIndexer())
	s.synced = []cache.InformerSynced{roles.HasSynced, clusterRoles.HasSynced, roleBindings.HasSynced, clusterRoleBindings.HasSynced}
	return s, nil
}

// HasSynced tells whether the informers behind the store have synced; a
// store made by NewIndexerStore always has.
func (s *IndexerStore) HasSynced() bool {
	for _, synced := range s.synced {
		if !synced() {
			return false
		}
	}
	return true
}

// GetRole implements Store.
func (s *IndexerStore) GetRole(cluster logicalcluster.Name, namespace, name string) (*rbacv1.Role, bool, error) {
	return getByKey[*rbacv1.Role](s.roles, informers.ToKey(cluster, namespace, name))
}

// GetClusterRole implements Store.
func (s *IndexerStore) GetClusterRole(cluster logicalcluster.Name, name string) (*rbacv1.ClusterRole, bool, error) {
	return getByKey[*rbacv1.ClusterRole](s.clusterRoles, informers.ToKey(cluster, "", name))
}

// getByKey reads one object of type T from indexer. A miss is no error:
// bindings often refer to roles of the bootstrap policy, and building
// NotFound errors for them would cost more than the lookup.
func getByKey[T any](indexer cache.Indexer, key string) (T, bool, error) {
	var zero T
	obj, exists, err := indexer.GetByKey(key)
	if err != nil || !exists {
		return zero, false, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, false, fmt.Errorf("store holds %T under %q, want %T", obj, key, zero)
	}
	return t, true, nil
}

// RoleBindings implements Store.
func (s *IndexerStore) RoleBindings(cluster logicalcluster.Name, namespace string, u user.Info) ([]*rbacv1.RoleBinding, error) {
	return bindingsFor[*rbacv1.RoleBinding](s.roleBindings, cluster, namespace, u)
}

// ClusterRoleBindings implements Store.
func (s *IndexerStore) ClusterRoleBindings(cluster logicalcluster.Name, u user.Info) ([]*rbacv1.ClusterRoleBinding, error) {
	return bindingsFor[*rbacv1.ClusterRoleBinding](s.clusterRoleBindings, cluster, "", u)
}

// binding is what bindingsFor needs of a RoleBinding or ClusterRoleBinding.
type binding interface {
	*rbacv1.RoleBinding | *rbacv1.ClusterRoleBinding
	GetName() string
}

// bindingsFor returns the bindings of a namespace of cluster (all
// ClusterRoleBindings for "") indexed under one of u's subject keys,
// sorted by name and without duplicates.
func bindingsFor[B binding](indexer cache.Indexer, cluster logicalcluster.Name, namespace string, u user.Info) ([]B, error) {
	var out []B
	for _, key := range userSubjectKeys(cluster, namespace, u) {
		objs, err := indexer.ByIndex(SubjectIndex, key)
		if err != nil {
			return nil, fmt.Errorf("looking up bindings of %q: %w", key, err)
		}
		for _, obj := range objs {
			b, ok := obj.(B)
			if !ok {
				return nil, fmt.Errorf("binding store holds %T", obj)
			}
			out = append(out, b)
		}
	}
	if len(out) < 2 {
		return out, nil
	}
	slices.SortFunc(out, func(a, b B) int { return cmp.Compare(a.GetName(), b.GetName()) })
	// Names are unique in a namespace of a cluster: equal neighbours are
	// one binding found under several keys.
	return slices.CompactFunc(out, func(a, b B) bool { return a.GetName() == b.GetName() }), nil
}

// WithClusterScoped returns a copy of s that reads ClusterRoles and
// ClusterRoleBindings from other indexers (which must have SubjectIndex
// for bindings), such as unions with the replicas of other shards, and
// waits for the same informers.
func (s *IndexerStore) WithClusterScoped(clusterRoles, clusterRoleBindings cache.Indexer) *IndexerStore {
	out := *s
	out.clusterRoles, out.clusterRoleBindings = clusterRoles, clusterRoleBindings
	return &out
}
