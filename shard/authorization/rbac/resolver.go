package rbac

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Visitor receives the rules that apply to a user one by one, with the
// binding they come from, or an error met on the way (with a nil rule). It
// returns false to stop the walk.
type Visitor func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool

// Resolver finds the rules that apply to a user in a logical cluster.
type Resolver struct {
	store Store
	// fallback is the cluster whose ClusterRoles serve bindings that refer
	// to a ClusterRole their own cluster lacks; empty for none.
	fallback logicalcluster.Name
}

// NewResolver returns a Resolver over store. A binding that refers to a
// ClusterRole its cluster does not have gets the ClusterRole of that name
// in fallback (usually logicalcluster.SystemAdmin, the home of the
// bootstrap policy); an empty fallback disables this.
func NewResolver(store Store, fallback logicalcluster.Name) *Resolver {
	return &Resolver{store: store, fallback: fallback}
}

// VisitRulesFor calls visitor with every rule u holds in cluster through
// ClusterRoleBindings, and, for a non-empty namespace, through the
// RoleBindings of that namespace, in this order, until visitor returns
// false. Bindings whose role cannot be found yield an error and the walk
// goes on.
func (r *Resolver) VisitRulesFor(cluster logicalcluster.Name, u user.Info, namespace string, visitor Visitor) {
	crbs, err := r.store.ClusterRoleBindings(cluster, u)
	if err != nil {
		if !visitor(nil, nil, err) {
			return
		}
	}
	for _, b := range crbs {
		i, ok := AppliesTo(u, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := r.RoleRefRules(cluster, b.RoleRef, "")
		if err != nil {
			if !visitor(nil, nil, err) {
				return
			}
			continue
		}
		source := clusterRoleBindingSource{binding: b, subject: &b.Subjects[i]}
		for j := range rules {
			if !visitor(source, &rules[j], nil) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}

	rbs, err := r.store.RoleBindings(cluster, namespace, u)
	if err != nil {
		visitor(nil, nil, err)
		return
	}
	for _, b := range rbs {
		i, ok := AppliesTo(u, b.Subjects, namespace)
		if !ok {
			continue
		}
		rules, err := r.RoleRefRules(cluster, b.RoleRef, namespace)
		if err != nil {
			if !visitor(nil, nil, err) {
				return
			}
			continue
		}
		source := roleBindingSource{binding: b, subject: &b.Subjects[i]}
		for j := range rules {
			if !visitor(source, &rules[j], nil) {
				return
			}
		}
	}
}

// RulesFor returns every rule u holds in cluster, in namespace (cluster
// wide only for ""). The error lists the bindings whose roles could not be
// resolved; the rules returned are then incomplete but still valid.
func (r *Resolver) RulesFor(cluster logicalcluster.Name, u user.Info, namespace string) ([]rbacv1.PolicyRule, error) {
	var (
		rules []rbacv1.PolicyRule
		errs  []error
	)
	r.VisitRulesFor(cluster, u, namespace, func(_ fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil {
			rules = append(rules, *rule)
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	return rules, utilerrors.NewAggregate(errs)
}

// RoleRefRules returns the rules of the role a binding of cluster refers
// to; namespace is the binding's namespace ("" for ClusterRoleBindings).
// ClusterRoles missing in cluster are looked up in the fallback cluster.
func (r *Resolver) RoleRefRules(cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		role, found, err := r.store.GetRole(cluster, namespace, ref.Name)
		switch {
		case err != nil:
			return nil, err
		case !found:
			return nil, apierrors.NewNotFound(rbacv1.Resource("role"), ref.Name)
		}
		return role.Rules, nil
	case "ClusterRole":
		role, found, err := r.store.GetClusterRole(cluster, ref.Name)
		if err == nil && !found && r.fallback != "" && r.fallback != cluster {
			role, found, err = r.store.GetClusterRole(r.fallback, ref.Name)
		}
		switch {
		case err != nil:
			return nil, err
		case !found:
			return nil, apierrors.NewNotFound(rbacv1.Resource("clusterrole"), ref.Name)
		}
		return role.Rules, nil
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
}
