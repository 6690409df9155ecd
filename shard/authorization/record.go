package authorization

import (
	"context"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// decisionLabel is the metric label of a verdict.
func decisionLabel(v verdict) string {
	switch {
	case v.err != nil && v.decision != authorizer.DecisionAllow:
		return "error"
	case v.decision == authorizer.DecisionAllow:
		return "allowed"
	case v.decision == authorizer.DecisionDeny:
		return "denied"
	default:
		return "no_opinion"
	}
}

// record counts a verdict and logs it at V(4) with the cluster.
func record(ctx context.Context, cluster logicalcluster.Cluster, attrs authorizer.Attributes, v verdict, took time.Duration) {
	label := decisionLabel(v)
	decisions.WithLabelValues(label, v.stage).Inc()

	logger := klog.FromContext(ctx).V(4)
	if !logger.Enabled() {
		return
	}
	name := cluster.Name.String()
	if cluster.Wildcard {
		name = string(logicalcluster.Wildcard)
	}
	userName := ""
	if u := attrs.GetUser(); u != nil {
		userName = u.GetName()
	}
	kv := []any{"cluster", name, "user", userName, "verb", attrs.GetVerb()}
	if attrs.IsResourceRequest() {
		kv = append(kv, "group", attrs.GetAPIGroup(), "resource", attrs.GetResource(), "subresource", attrs.GetSubresource(),
			"namespace", attrs.GetNamespace(), "name", attrs.GetName())
	} else {
		kv = append(kv, "path", attrs.GetPath())
	}
	kv = append(kv, "decision", label, "stage", v.stage, "reason", v.reason, "took", took)
	if v.err != nil {
		kv = append(kv, "err", v.err)
	}
	logger.Info("Authorization decision", kv...)
}
