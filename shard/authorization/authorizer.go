package authorization

import (
	"context"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/scopes"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// Authorizer is the kcp authorizer chain of a shard (see the package
// documentation). It is safe for concurrent use.
type Authorizer struct {
	store        rbac.Store
	resolver     *rbac.Resolver
	local        *rbac.Authorizer
	bootstrap    *rbac.Authorizer
	clusterState ClusterStateFunc
	contentAdmin ContentAdminFunc
	// policy is the last stage, possibly wrapped by the maximal
	// permission policy.
	policy authorizer.Authorizer
}

var (
	_ authorizer.Authorizer   = &Authorizer{}
	_ authorizer.RuleResolver = &Authorizer{}
)

// New builds the chain from c and registers its metrics (once per process).
func New(c Config) (*Authorizer, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	registerMetrics()
	resolver := rbac.NewResolver(c.Store, logicalcluster.SystemAdmin)
	a := &Authorizer{
		store:        c.Store,
		resolver:     resolver,
		local:        rbac.New(resolver, rbac.RequestCluster),
		bootstrap:    rbac.New(resolver, rbac.FixedCluster(logicalcluster.SystemAdmin)),
		clusterState: c.ClusterState,
		contentAdmin: c.ContentAdmin,
	}
	a.policy = policyUnion{local: a.local, bootstrap: a.bootstrap}
	if c.MaximalPermissionPolicy != nil {
		a.policy = c.MaximalPermissionPolicy(a.policy)
	}
	return a, nil
}

// Stages of the chain, as metric label values.
const (
	stagePublic         = "public"
	stageVirtual        = "virtual_workspace"
	stageMasters        = "masters"
	stageGuard          = "guard"
	stageContent        = "content"
	stageRequiredGroups = "required_groups"
	stagePolicy         = "policy"
)

// verdict is a decision of one stage.
type verdict struct {
	decision authorizer.Decision
	reason   string
	stage    string
	err      error
}

func allow(stage, reason string) verdict {
	return verdict{decision: authorizer.DecisionAllow, stage: stage, reason: reason}
}

func deny(stage, reason string) verdict {
	return verdict{decision: authorizer.DecisionDeny, stage: stage, reason: reason}
}

// Authorize implements authorizer.Authorizer.
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	start := time.Now()
	cluster, hasCluster := logicalcluster.ClusterFrom(ctx)
	v := a.decide(ctx, cluster, hasCluster, attrs)
	record(ctx, cluster, attrs, v, time.Since(start))
	return v.decision, v.reason, v.err
}

// decide runs the stages in order until one decides.
func (a *Authorizer) decide(ctx context.Context, cluster logicalcluster.Cluster, hasCluster bool, attrs authorizer.Attributes) verdict {
	if IsPublic(attrs) {
		return allow(stagePublic, "public path")
	}
	if IsVirtualWorkspace(cluster, attrs) {
		return allow(stageVirtual, "virtual workspaces authorize their requests themselves")
	}
	u := attrs.GetUser()
	if u == nil {
		return deny(stageGuard, "no user")
	}
	if !scopes.Contains(u, cluster) {
		u = scopes.OutOfScope(u)
		attrs = withUser(attrs, u)
	}
	if shardadmin.Is(u) {
		return allow(stageMasters, "member of "+user.SystemPrivilegedGroup)
	}
	if !hasCluster || (!cluster.Wildcard && cluster.Name.Empty()) {
		return deny(stageGuard, "no logical cluster in the request")
	}
	if v, refused := guard(cluster, attrs); refused {
		return v
	}

	st, exists, err := a.clusterState(cluster.Name)
	switch {
	case err != nil:
		return verdict{decision: authorizer.DecisionNoOpinion, stage: stageContent, reason: WorkspaceAccessNotPermittedReason,
			err: fmt.Errorf("reading the LogicalCluster of %q: %w", cluster, err)}
	case !exists:
		return deny(stageContent, fmt.Sprintf("%s: logical cluster %q does not exist", WorkspaceAccessNotPermittedReason, cluster))
	}
	access, refusal := a.content(ctx, cluster, st, u)
	if refusal != nil {
		return *refusal
	}
	if st.RequiredGroups != "" && !access.serviceAccount {
		if required := ParseRequiredGroups(st.RequiredGroups); !required.SatisfiedBy(u.GetGroups()) {
			return deny(stageRequiredGroups, fmt.Sprintf("user %q is not a member of the groups logical cluster %q requires: %s", u.GetName(), cluster, required))
		}
	}

	d, reason, err := a.policy.Authorize(ctx, withUser(attrs, withGroups(u, access.groups...)))
	return verdict{decision: d, reason: reason, stage: stagePolicy, err: err}
}

// Policy returns the last stage of the chain alone: RBAC of the logical
// cluster in the request context united with bootstrap RBAC, without the
// workspace content and required-groups checks. It decides permissions on
// objects of a logical cluster that the user need not be able to enter,
// such as verb use on a WorkspaceType.
func (a *Authorizer) Policy() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
		u := attrs.GetUser()
		if u == nil {
			return authorizer.DecisionDeny, "no user", nil
		}
		if c, _ := logicalcluster.ClusterFrom(ctx); !scopes.Contains(u, c) {
			attrs = withUser(attrs, scopes.OutOfScope(u))
		} else if shardadmin.Is(u) {
			return authorizer.DecisionAllow, "member of " + user.SystemPrivilegedGroup, nil
		}
		return a.policy.Authorize(ctx, attrs)
	})
}

// ConditionsAwareAuthorize implements authorizer.Authorizer; the chain
// makes no conditional decisions.
func (a *Authorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer; it fails closed.
func (a *Authorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver for the request's logical
// cluster: the rules of its local policy and of the bootstrap policy that
// u holds in namespace, with the per-request groups the workspace content
// authorizer would add. Wildcard requests and, for non-admins, system
// clusters get none. The list is never marked incomplete; roles that could
// not be resolved are reported in the error.
func (a *Authorizer) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() || (c.Name.IsSystem() && !shardadmin.Is(u)) {
		return nil, nil, false, nil
	}
	rules, err := a.PolicyRulesFor(ctx, c.Name, u, namespace)
	res, nonRes := rbac.RuleInfos(rules)
	return res, nonRes, false, err
}

// PolicyRulesFor returns the RBAC rules u holds in namespace of cluster
// ("" for cluster-wide rules only) through the local and the bootstrap
// policy, with the per-request groups of the workspace content authorizer
// if it would let u in. The error lists bindings whose roles could not be
// resolved; the rules are then incomplete.
func (a *Authorizer) PolicyRulesFor(ctx context.Context, cluster logicalcluster.Name, u user.Info, namespace string) ([]rbacv1.PolicyRule, error) {
	if !scopes.Contains(u, logicalcluster.Cluster{Name: cluster}) {
		u = scopes.OutOfScope(u)
	}
	if st, exists, err := a.clusterState(cluster); err == nil && exists {
		if access, refusal := a.content(ctx, logicalcluster.Cluster{Name: cluster}, st, u); refusal == nil {
			u = withGroups(u, access.groups...)
		}
	}
	rules, err := a.resolver.RulesFor(cluster, u, namespace)
	errs := []error{err}
	if cluster != logicalcluster.SystemAdmin {
		bootstrap, err := a.resolver.RulesFor(logicalcluster.SystemAdmin, u, namespace)
		rules = append(rules, bootstrap...)
		errs = append(errs, err)
	}
	return rules, utilerrors.NewAggregate(errs)
}

// RoleRefRules returns the rules of the role a binding in namespace ("" for
// ClusterRoleBindings) of cluster refers to; ClusterRoles missing in
// cluster come from system:admin.
func (a *Authorizer) RoleRefRules(cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	return a.resolver.RoleRefRules(cluster, ref, namespace)
}

// withUser returns attrs for another user.
func withUser(attrs authorizer.Attributes, u user.Info) authorizer.Attributes {
	if u == attrs.GetUser() {
		return attrs
	}
	return userAttributes{Attributes: attrs, user: u}
}

// userAttributes overrides the user of Attributes and keeps everything
// else, selectors included.
type userAttributes struct {
	authorizer.Attributes
	user user.Info
}

func (a userAttributes) GetUser() user.Info { return a.user }

// HasSynced tells whether the RBAC store has synced, if it can tell
// (rbac.NewInformerStore's can); until then non-admins are refused what
// RBAC would allow them.
func (a *Authorizer) HasSynced() bool {
	if s, ok := a.store.(interface{ HasSynced() bool }); ok {
		return s.HasSynced()
	}
	return true
}
