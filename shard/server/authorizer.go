package server

import (
	"context"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// MastersGroup is the group of shard admins.
const MastersGroup = "system:masters"

// clusterAuthorizer is the shard's authorizer until the kcp authorizer chain
// lands: shard admins may do anything; other authenticated users may work
// with the content of a named logical cluster, but not across all clusters,
// not in system:* clusters, not on LogicalClusters beyond reading them, and
// not impersonate.
type clusterAuthorizer struct{}

func newAuthorizer() clusterAuthorizer { return clusterAuthorizer{} }

func (clusterAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if isMaster(a.GetUser()) {
		return authorizer.DecisionAllow, "", nil
	}
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok {
		return authorizer.DecisionDeny, "no logical cluster", nil
	}
	switch {
	case c.Wildcard:
		return authorizer.DecisionDeny, "requests across all logical clusters are only allowed for " + MastersGroup, nil
	case c.Name.IsSystem() && !isPublic(a):
		return authorizer.DecisionDeny, "system logical clusters are only accessible to " + MastersGroup, nil
	case a.GetVerb() == "impersonate":
		return authorizer.DecisionDeny, "impersonation is only allowed for " + MastersGroup, nil
	case a.IsResourceRequest() && a.GetAPIGroup() == "core.kcp.io" && a.GetResource() == "logicalclusters" && !readOnly(a.GetVerb()):
		return authorizer.DecisionDeny, "only " + MastersGroup + " may change LogicalClusters", nil
	}
	return authorizer.DecisionAllow, "", nil
}

func readOnly(verb string) bool {
	return verb == "get" || verb == "list" || verb == "watch"
}

// isPublic tells whether a request is for a path anyone may read.
func isPublic(a authorizer.Attributes) bool {
	if a.IsResourceRequest() || a.GetVerb() != "get" {
		return false
	}
	for _, p := range publicPaths {
		if a.GetPath() == p || strings.HasPrefix(a.GetPath(), p+"/") {
			return true
		}
	}
	return false
}

// RulesFor implements authorizer.RuleResolver.
func (clusterAuthorizer) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	if c, ok := logicalcluster.ClusterFrom(ctx); ok && (c.Wildcard || c.Name.IsSystem()) && !isMaster(u) {
		return nil, nil, false, nil
	}
	all := []string{"*"}
	return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: all, APIGroups: all, Resources: all}},
		[]authorizer.NonResourceRuleInfo{&authorizer.DefaultNonResourceRuleInfo{Verbs: all, NonResourceURLs: all}}, false, nil
}

func isMaster(u user.Info) bool {
	if u == nil {
		return false
	}
	for _, g := range u.GetGroups() {
		if g == MastersGroup {
			return true
		}
	}
	return false
}

// ConditionsAwareAuthorize implements authorizer.Authorizer; this authorizer
// has no conditional decisions.
func (a clusterAuthorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer.
func (clusterAuthorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}
