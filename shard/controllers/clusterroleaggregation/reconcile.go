package clusterroleaggregation

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// deps are what reconcile reads and writes, as plain functions.
type deps struct {
	// get returns a ClusterRole of a cluster from the cache, or false.
	get func(cluster logicalcluster.Name, name string) (*rbacv1.ClusterRole, bool, error)
	// list returns the ClusterRoles of a cluster that selector matches.
	list func(cluster logicalcluster.Name, selector labels.Selector) ([]*rbacv1.ClusterRole, error)
	// apply sets the rules of a ClusterRole.
	apply func(ctx context.Context, cluster logicalcluster.Name, name string, rules []rbacv1.PolicyRule) error
}

// reconcile sets the rules of an aggregated ClusterRole to the aggregation
// of the ClusterRoles it selects, if they differ.
func reconcile(ctx context.Context, key reconciler.Key, d deps) (reconciler.Result, error) {
	role, found, err := d.get(key.Cluster, key.Name)
	if err != nil || !found || role.AggregationRule == nil {
		return reconciler.Result{}, err
	}
	rules, err := aggregate(role, func(selector labels.Selector) ([]*rbacv1.ClusterRole, error) {
		return d.list(key.Cluster, selector)
	})
	if err != nil {
		return reconciler.Result{}, err
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return reconciler.Result{}, nil
	}
	if err := d.apply(ctx, key.Cluster, key.Name, rules); err != nil {
		return reconciler.Result{}, fmt.Errorf("applying the aggregated rules of ClusterRole %s: %w", key.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Aggregated ClusterRole rules", "rules", len(rules))
	return reconciler.Result{}, nil
}

// aggregate returns the rules of the ClusterRoles role's selectors match
// (other than role itself), in selector order and then by role name,
// without duplicates. An invalid selector is a terminal error: only a new
// version of the role can fix it.
func aggregate(role *rbacv1.ClusterRole, list func(labels.Selector) ([]*rbacv1.ClusterRole, error)) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, reconciler.TerminalError(fmt.Errorf("aggregation rule selector %d: %w", i, err))
		}
		matched, err := list(selector)
		if err != nil {
			return nil, fmt.Errorf("listing ClusterRoles for selector %s: %w", selector, err)
		}
		slices.SortFunc(matched, func(a, b *rbacv1.ClusterRole) int { return cmp.Compare(a.Name, b.Name) })
		for _, m := range matched {
			if m.Name == role.Name {
				continue
			}
			for _, r := range m.Rules {
				if !slices.ContainsFunc(rules, func(e rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(e, r) }) {
					rules = append(rules, *r.DeepCopy())
				}
			}
		}
	}
	return rules, nil
}
