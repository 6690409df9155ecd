package authorization

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// policyUnion is the last stage: the local policy (RBAC of the request's
// cluster) or else the bootstrap policy (RBAC of system:admin).
type policyUnion struct {
	local, bootstrap *rbac.Authorizer
}

var _ authorizer.Authorizer = policyUnion{}

// Authorize implements authorizer.Authorizer. Neither policy ever denies;
// without an allow the reason says where nothing was found.
func (p policyUnion) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	d, localReason, err := p.local.Authorize(ctx, attrs)
	if d != authorizer.DecisionNoOpinion || err != nil {
		return d, localReason, err
	}
	d, bootstrapReason, err := p.bootstrap.Authorize(ctx, attrs)
	if d != authorizer.DecisionNoOpinion || err != nil {
		return d, bootstrapReason, err
	}
	// The cluster as the request addressed it: a workspace path is not
	// resolved to its logical cluster's name for the caller.
	cluster, ok := logicalcluster.ClusterFrom(ctx)
	if !ok {
		name, _ := p.local.Cluster(ctx)
		cluster = logicalcluster.Cluster{Name: name}
	}
	reasons := []string{fmt.Sprintf("RBAC: neither the policy of logical cluster %q nor the bootstrap policy of %q allows it", cluster, logicalcluster.SystemAdmin)}
	for _, r := range []string{localReason, bootstrapReason} {
		if r != "" {
			reasons = append(reasons, r)
		}
	}
	return authorizer.DecisionNoOpinion, strings.Join(reasons, "; "), nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer.
func (p policyUnion) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(p.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer; it fails closed.
func (policyUnion) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}
