package clusterroleaggregation

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// Name is the controller's name in logs and metrics.
	Name = "clusterrole-aggregation"

	// FieldManager owns the rules of aggregated ClusterRoles, as upstream.
	FieldManager = "clusterrole-aggregation-controller"

	// AggregatingIndex indexes the ClusterRoles that have an
	// aggregationRule by logical cluster.
	AggregatingIndex = "rbac-aggregating"

	userAgent = "tessera-clusterrole-aggregation-controller"
)

// Controller is the ClusterRole aggregation controller of a shard.
type Controller struct {
	*reconciler.Controller
	clusterRoles informers.Informer[*rbacv1.ClusterRole]
	clients      *clusters.ClusterClientset
}

// New wires the controller to the shard's wildcard ClusterRoles informer
// and writes through per-cluster clients derived from loopback.
func New(loopback *rest.Config, f *informers.SharedInformerFactory) (*Controller, error) {
	cfg := rest.CopyConfig(loopback)
	rest.AddUserAgent(cfg, userAgent)
	clients, err := clusters.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s clients: %w", Name, err)
	}
	c := &Controller{clusterRoles: f.ClusterRoles(), clients: clients}
	informer := c.clusterRoles.Informer()
	if _, ok := informer.GetIndexer().GetIndexers()[AggregatingIndex]; !ok {
		if err := informer.AddIndexers(cache.Indexers{AggregatingIndex: aggregatingIndexFunc}); err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
	}
	d := deps{get: c.get, list: c.list, apply: c.apply}
	c.Controller = reconciler.New(Name, reconciler.Func(func(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
		return reconcile(ctx, key, d)
	}), reconciler.Options{Workers: 2})
	if err := c.Watch(informer, reconciler.EnqueueMappedHandler(c.Controller, c.aggregatorsOf)); err != nil {
		return nil, err
	}
	return c, nil
}

// aggregatingIndexFunc indexes a ClusterRole with an aggregationRule under
// its logical cluster.
func aggregatingIndexFunc(obj any) ([]string, error) {
	role, ok := obj.(*rbacv1.ClusterRole)
	if !ok || role.AggregationRule == nil {
		return nil, nil
	}
	return []string{logicalcluster.From(role).String()}, nil
}

// aggregatorsOf maps a changed ClusterRole to the aggregated ClusterRoles
// of its cluster, which may select it (or stop selecting it).
func (c *Controller) aggregatorsOf(role *rbacv1.ClusterRole) []reconciler.Key {
	cluster := logicalcluster.From(role)
	objs, err := c.clusterRoles.Informer().GetIndexer().ByIndex(AggregatingIndex, cluster.String())
	if err != nil {
		return nil
	}
	keys := make([]reconciler.Key, 0, len(objs)+1)
	if role.AggregationRule != nil {
		keys = append(keys, reconciler.Key{Cluster: cluster, Name: role.Name})
	}
	for _, obj := range objs {
		if r, ok := obj.(*rbacv1.ClusterRole); ok && r.Name != role.Name {
			keys = append(keys, reconciler.Key{Cluster: cluster, Name: r.Name})
		}
	}
	return keys
}

func (c *Controller) get(cluster logicalcluster.Name, name string) (*rbacv1.ClusterRole, bool, error) {
	role, err := c.clusterRoles.Lister().Cluster(cluster).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return role, true, nil
}

func (c *Controller) list(cluster logicalcluster.Name, selector labels.Selector) ([]*rbacv1.ClusterRole, error) {
	return c.clusterRoles.Lister().Cluster(cluster).List(selector)
}

func (c *Controller) apply(ctx context.Context, cluster logicalcluster.Name, name string, rules []rbacv1.PolicyRule) error {
	client, err := c.clients.For(cluster)
	if err != nil {
		return err
	}
	ac := rbacv1ac.ClusterRole(name).WithRules(applyRules(rules)...)
	_, err = client.RbacV1().ClusterRoles().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}

// applyRules converts rules to apply configurations.
func applyRules(rules []rbacv1.PolicyRule) []*rbacv1ac.PolicyRuleApplyConfiguration {
	out := make([]*rbacv1ac.PolicyRuleApplyConfiguration, 0, len(rules))
	for _, r := range rules {
		ac := rbacv1ac.PolicyRule().WithVerbs(r.Verbs...).WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).
			WithResourceNames(r.ResourceNames...).WithNonResourceURLs(r.NonResourceURLs...)
		out = append(out, ac)
	}
	return out
}
