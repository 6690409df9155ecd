package rbac

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ClusterFunc picks the logical cluster whose RBAC decides a request, and
// false if there is none.
type ClusterFunc func(ctx context.Context) (logicalcluster.Name, bool)

// RequestCluster picks the named logical cluster of the request, for the
// local policy. Wildcard requests have none.
func RequestCluster(ctx context.Context) (logicalcluster.Name, bool) {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() {
		return "", false
	}
	return c.Name, true
}

// FixedCluster always picks name, for example logicalcluster.SystemAdmin
// for the bootstrap policy.
func FixedCluster(name logicalcluster.Name) ClusterFunc {
	return func(context.Context) (logicalcluster.Name, bool) { return name, true }
}

// Authorizer decides requests with the RBAC of one logical cluster per
// request. It allows or has no opinion; it never denies.
type Authorizer struct {
	resolver *Resolver
	cluster  ClusterFunc
}

var (
	_ authorizer.Authorizer   = &Authorizer{}
	_ authorizer.RuleResolver = &Authorizer{}
)

// New returns an Authorizer that evaluates the RBAC of the cluster picks.
func New(resolver *Resolver, cluster ClusterFunc) *Authorizer {
	return &Authorizer{resolver: resolver, cluster: cluster}
}

// Resolver returns the resolver the authorizer evaluates with.
func (a *Authorizer) Resolver() *Resolver { return a.resolver }

// Cluster returns the logical cluster whose RBAC decides a request in ctx.
func (a *Authorizer) Cluster(ctx context.Context) (logicalcluster.Name, bool) { return a.cluster(ctx) }

// Authorize implements authorizer.Authorizer: Allow with the binding that
// allows the request as reason, or NoOpinion, with the errors met as
// reason (never as error, so that a dangling binding does not fail
// requests with 500).
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	cluster, ok := a.cluster(ctx)
	if !ok {
		return authorizer.DecisionNoOpinion, "RBAC: no logical cluster", nil
	}
	return a.AuthorizeIn(cluster, attrs)
}

// AuthorizeIn is Authorize with the RBAC of cluster.
func (a *Authorizer) AuthorizeIn(cluster logicalcluster.Name, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "RBAC: no user", nil
	}
	var (
		allowedBy fmt.Stringer
		errs      []error
	)
	a.resolver.VisitRulesFor(cluster, u, attrs.GetNamespace(), func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil && RuleAllows(attrs, rule) {
			allowedBy = source
			return false
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	if allowedBy != nil {
		return authorizer.DecisionAllow, "RBAC: allowed by " + allowedBy.String(), nil
	}
	if len(errs) > 0 {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("RBAC: %v", utilerrors.NewAggregate(errs)), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// AllowsIn tells whether the RBAC of cluster allows attrs, without
// building a reason: for checks whose reason nobody reads.
func (a *Authorizer) AllowsIn(cluster logicalcluster.Name, attrs authorizer.Attributes) bool {
	u := attrs.GetUser()
	if u == nil {
		return false
	}
	allowed := false
	a.resolver.VisitRulesFor(cluster, u, attrs.GetNamespace(), func(_ fmt.Stringer, rule *rbacv1.PolicyRule, _ error) bool {
		allowed = rule != nil && RuleAllows(attrs, rule)
		return !allowed
	})
	return allowed
}

// ConditionsAwareAuthorize implements authorizer.Authorizer; RBAC makes no
// conditional decisions.
func (a *Authorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer; it fails closed.
func (a *Authorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver: the rules u holds in the
// picked cluster, in namespace. It is never incomplete; unresolvable
// bindings are reported in the error.
func (a *Authorizer) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	cluster, ok := a.cluster(ctx)
	if !ok {
		return nil, nil, false, nil
	}
	rules, err := a.resolver.RulesFor(cluster, u, namespace)
	res, nonRes := RuleInfos(rules)
	return res, nonRes, false, err
}

// RuleInfos converts policy rules into what an authorizer.RuleResolver
// returns: one resource rule for a rule with resources, one non-resource
// rule for a rule with URLs.
func RuleInfos(rules []rbacv1.PolicyRule) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo) {
	var (
		res    []authorizer.ResourceRuleInfo
		nonRes []authorizer.NonResourceRuleInfo
	)
	for _, r := range rules {
		if len(r.Resources) > 0 {
			res = append(res, &authorizer.DefaultResourceRuleInfo{
				Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames,
			})
		}
		if len(r.NonResourceURLs) > 0 {
			nonRes = append(nonRes, &authorizer.DefaultNonResourceRuleInfo{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return res, nonRes
}
