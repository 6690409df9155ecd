package policies

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// policyKind is what the validating and mutating plugins differ in: their
// policy and binding types, how a binding names its policy, a policy's
// param kind, and how a policy is compiled.
type policyKind[P interface {
	runtime.Object
	metav1.Object
}, B runtime.Object, E any] struct {
	policies   informers.Informer[P]
	bindings   informers.Informer[B]
	policyName func(B) string
	paramKind  func(P) *admissionregistrationv1.ParamKind
	compile    func(P) E
	compiled   *lru.Cache
}

// evaluator returns the compiled policy, compiling it on first use; the
// same UID and generation is the same spec.
func (k policyKind[P, B, E]) evaluator(p P) E {
	key := compiledKey{p.GetUID(), p.GetGeneration()}
	if e, ok := k.compiled.Get(key); ok {
		return e.(E)
	}
	e := k.compile(p)
	k.compiled.Add(key, e)
	return e
}

// requestCluster returns the logical cluster whose policies apply to a,
// and false if none do (requests across all clusters, excluded resources).
func requestCluster(ctx context.Context, a admission.Attributes) (logicalcluster.Name, bool) {
	cluster, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || cluster.Wildcard || excluded.Has(a.GetResource().GroupResource()) {
		return "", false
	}
	return cluster.Name, true
}

// hooks returns the hooks of cluster's policies that have bindings, with
// their compiled evaluators and params, and a matcher that sees the
// cluster's namespaces; no hooks when no policy applies.
func (k policyKind[P, B, E]) hooks(deps Dependencies, a admission.Attributes, cluster logicalcluster.Name) ([]generic.PolicyHook[P, B, E], *matching.Matcher, error) {
	if !k.policies.Informer().HasSynced() || !k.bindings.Informer().HasSynced() {
		return nil, nil, admission.NewForbidden(a, fmt.Errorf("not yet ready to handle request"))
	}
	policies, err := k.policies.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil || len(policies) == 0 {
		return nil, nil, err
	}
	bindings, err := k.bindings.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	byPolicy := map[string][]B{}
	for _, b := range bindings {
		byPolicy[k.policyName(b)] = append(byPolicy[k.policyName(b)], b)
	}
	hooks := make([]generic.PolicyHook[P, B, E], 0, len(policies))
	for _, p := range policies {
		bs := byPolicy[p.GetName()]
		if len(bs) == 0 {
			continue
		}
		hook := generic.PolicyHook[P, B, E]{Policy: p, Bindings: bs, Evaluator: k.evaluator(p)}
		if pk := k.paramKind(p); pk != nil {
			hook.ParamInformer, hook.ParamScope, hook.ConfigurationError = deps.params(cluster, pk)
		}
		hooks = append(hooks, hook)
	}
	if len(hooks) == 0 {
		return nil, nil, nil
	}
	client, err := deps.Clients.For(cluster)
	if err != nil {
		return nil, nil, err
	}
	return hooks, matching.NewMatcher(deps.Namespaces.Lister().Cluster(cluster), client), nil
}
