package policies

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// MutatingPluginName is the name of the mutating plugin in the shard's
// admission chain, as in kube-apiserver.
const MutatingPluginName = "MutatingAdmissionPolicy"

// TypeConverterFunc returns the type converter of a kind served in a
// logical cluster (the shard's static one for built-in kinds, the CRD's for
// custom resources), or nil if the cluster serves no such kind.
type TypeConverterFunc func(cluster logicalcluster.Name, gvk schema.GroupVersionKind) managedfields.TypeConverter

// MutatingDependencies are what the mutating plugin reads, besides those
// it shares with the validating one.
type MutatingDependencies struct {
	Dependencies
	Policies       informers.Informer[*admissionregistrationv1.MutatingAdmissionPolicy]
	Bindings       informers.Informer[*admissionregistrationv1.MutatingAdmissionPolicyBinding]
	TypeConverters TypeConverterFunc
}

// Mutating is the MutatingAdmissionPolicy plugin of a shard, built like
// Validating: per request, upstream's mutating dispatcher over the
// cluster's policies, bindings and namespaces, with compiled policies in a
// shard-wide LRU.
type Mutating struct {
	*admission.Handler
	deps MutatingDependencies
	kind policyKind[*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding, mutating.PolicyEvaluator]
}

var (
	_ admission.MutationInterface       = &Mutating{}
	_ admission.InitializationValidator = &Mutating{}
)

// NewMutating returns the mutating plugin.
func NewMutating(deps MutatingDependencies) (*Mutating, error) {
	if err := deps.check(MutatingPluginName); err != nil {
		return nil, err
	}
	if deps.TypeConverters == nil {
		return nil, fmt.Errorf("%s: type converters are required", MutatingPluginName)
	}
	n := deps.MaxCompiled
	if n <= 0 {
		n = DefaultMaxCompiled
	}
	return &Mutating{
		// There is no object to mutate in a DELETE.
		Handler: admission.NewHandler(admission.Create, admission.Update, admission.Connect),
		deps:    deps,
		kind: policyKind[*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding, mutating.PolicyEvaluator]{
			policies:   deps.Policies,
			bindings:   deps.Bindings,
			policyName: func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
			paramKind: func(p *admissionregistrationv1.MutatingAdmissionPolicy) *admissionregistrationv1.ParamKind {
				return p.Spec.ParamKind
			},
			compile:  compileMutating,
			compiled: lru.New(n),
		},
	}, nil
}

// ValidateInitialization implements admission.InitializationValidator.
func (m *Mutating) ValidateInitialization() error { return nil }

// Admit runs the mutating policies of the request's logical cluster.
func (m *Mutating) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	cluster, ok := requestCluster(ctx, a)
	if !ok {
		return nil
	}
	hooks, matcher, err := m.kind.hooks(m.deps.Dependencies, a, cluster)
	if err != nil || len(hooks) == 0 {
		return err
	}
	tcm := clusterTypeConverters{cluster: cluster, get: m.deps.TypeConverters}
	return mutating.NewDispatcher(m.deps.Authorizer, matcher, tcm).Dispatch(ctx, a, o, hooks)
}

// clusterTypeConverters are the type converters of one logical cluster,
// as upstream's dispatcher asks for them.
type clusterTypeConverters struct {
	cluster logicalcluster.Name
	get     TypeConverterFunc
}

var _ patch.TypeConverterManager = clusterTypeConverters{}

func (c clusterTypeConverters) GetTypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	return c.get(c.cluster, gvk)
}

func (clusterTypeConverters) Run(context.Context) {}

// compileMutating compiles a mutating policy as upstream's plugin does:
// variables, then match conditions, then each mutation (JSON patch or
// apply configuration, with the patch types in scope). A compilation
// error surfaces when the policy is invoked.
func compileMutating(policy *admissionregistrationv1.MutatingAdmissionPolicy) mutating.PolicyEvaluator {
	opts := plugincel.OptionalVariableDeclarations{HasParams: policy.Spec.ParamKind != nil, HasAuthorizer: true}
	c, err := plugincel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return mutating.PolicyEvaluator{Error: &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: fmt.Sprintf("failed to initialize CEL compiler: %v", err)}}
	}
	var variables []plugincel.NamedExpressionAccessor
	if policy.Spec.Variables != nil {
		variables = make([]plugincel.NamedExpressionAccessor, len(policy.Spec.Variables))
		for i, v := range policy.Spec.Variables {
			variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
		}
	}
	c.CompileAndStoreVariables(variables, opts, environment.StoredExpressions)

	var matcher matchconditions.Matcher
	if mcs := policy.Spec.MatchConditions; len(mcs) > 0 {
		accessors := make([]plugincel.ExpressionAccessor, len(mcs))
		for i := range mcs {
			accessors[i] = (*matchconditions.MatchCondition)(&mcs[i])
		}
		matcher = matchconditions.NewMatcher(c.CompileCondition(accessors, opts, environment.StoredExpressions), policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
	}
	patchOpts := opts
	patchOpts.HasPatchTypes = true
	var patchers []patch.Patcher
	for _, mu := range policy.Spec.Mutations {
		switch mu.PatchType {
		case admissionregistrationv1.PatchTypeJSONPatch:
			if mu.JSONPatch != nil {
				result := c.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: mu.JSONPatch.Expression}, patchOpts, environment.StoredExpressions)
				patchers = append(patchers, patch.NewJSONPatcher(result))
			}
		case admissionregistrationv1.PatchTypeApplyConfiguration:
			if mu.ApplyConfiguration != nil {
				result := c.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: mu.ApplyConfiguration.Expression}, patchOpts, environment.StoredExpressions)
				patchers = append(patchers, patch.NewApplyConfigurationPatcher(result))
			}
		}
	}
	return mutating.PolicyEvaluator{Matcher: matcher, Mutators: patchers, CompositedCompiler: c}
}
