package authorization

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The chain's metrics. They are registered with the process's legacy
// registry once, however many shards run in the process, and carry no
// per-cluster label.
var (
	decisions = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "tessera",
		Subsystem:      "authorization",
		Name:           "decisions_total",
		Help:           "Authorization decisions of the kcp authorizer chain, by decision (allowed, denied, no_opinion, error) and by the stage that decided (public, masters, guard, content, required_groups, policy).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"decision", "stage"})

	registerOnce sync.Once
)

// registerMetrics registers the metrics with the legacy registry, once.
func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(decisions) })
}
