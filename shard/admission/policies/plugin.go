package policies

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/dynamic"
	clientgoinformers "k8s.io/client-go/informers"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// PluginName is the name of the plugin in the shard's admission chain, as
// in kube-apiserver.
const PluginName = "ValidatingAdmissionPolicy"

// DefaultMaxCompiled bounds the compiled policies kept when
// Dependencies.MaxCompiled is zero.
const DefaultMaxCompiled = 1024

// paramTimeout bounds the read of a param, as upstream's direct reads.
const paramTimeout = time.Second

// excluded are the resources no policy sees: reviews are answered, not
// stored, and policies must not lock a cluster out of its own policies.
var excluded = sets.New(
	authenticationv1.Resource("tokenreviews"),
	authenticationv1.Resource("selfsubjectreviews"),
	authorizationv1.Resource("subjectaccessreviews"),
	authorizationv1.Resource("localsubjectaccessreviews"),
	authorizationv1.Resource("selfsubjectaccessreviews"),
	authorizationv1.Resource("selfsubjectrulesreviews"),
	admissionregistrationv1.Resource("validatingadmissionpolicies"),
	admissionregistrationv1.Resource("validatingadmissionpolicybindings"),
	admissionregistrationv1.Resource("mutatingadmissionpolicies"),
	admissionregistrationv1.Resource("mutatingadmissionpolicybindings"),
)

// ParamResolver tells the resource and scope of a param kind in a logical
// cluster (built-in kinds, or the cluster's CRDs), or an error if the
// cluster serves no such kind.
type ParamResolver func(cluster logicalcluster.Name, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error)

// Dependencies are what the plugin reads.
type Dependencies struct {
	Policies   informers.Informer[*admissionregistrationv1.ValidatingAdmissionPolicy]
	Bindings   informers.Informer[*admissionregistrationv1.ValidatingAdmissionPolicyBinding]
	Namespaces informers.Informer[*corev1.Namespace]
	// Clients look up namespaces the informer has not seen yet.
	Clients *clusters.ClusterClientset
	// Params reads params.
	Params       *clusters.DynamicClusterClient
	ResolveParam ParamResolver
	// Authorizer answers the authorizer variable of expressions.
	Authorizer authorizer.Authorizer
	// MaxCompiled bounds the compiled policies kept; zero means
	// DefaultMaxCompiled.
	MaxCompiled int
}

// Validating is the ValidatingAdmissionPolicy plugin of a shard.
type Validating struct {
	*admission.Handler
	deps Dependencies
	kind policyKind[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, validating.Validator]
}

var (
	_ admission.ValidationInterface     = &Validating{}
	_ admission.InitializationValidator = &Validating{}
)

// check tells whether the dependencies the plugins share are there.
func (d Dependencies) check(plugin string) error {
	if d.Clients == nil || d.Params == nil || d.ResolveParam == nil || d.Authorizer == nil {
		return fmt.Errorf("%s: every dependency is required", plugin)
	}
	return nil
}

// New returns the plugin.
func New(deps Dependencies) (*Validating, error) {
	if err := deps.check(PluginName); err != nil {
		return nil, err
	}
	n := deps.MaxCompiled
	if n <= 0 {
		n = DefaultMaxCompiled
	}
	return &Validating{
		Handler: admission.NewHandler(admission.Connect, admission.Create, admission.Delete, admission.Update),
		deps:    deps,
		kind: policyKind[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, validating.Validator]{
			policies:   deps.Policies,
			bindings:   deps.Bindings,
			policyName: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
			paramKind: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ParamKind {
				return p.Spec.ParamKind
			},
			compile:  compile,
			compiled: lru.New(n),
		},
	}, nil
}

// ValidateInitialization implements admission.InitializationValidator.
func (v *Validating) ValidateInitialization() error { return nil }

// compiledKey names a compiled policy: the same UID and generation is the
// same spec.
type compiledKey struct {
	uid        types.UID
	generation int64
}

// Validate runs the policies of the request's logical cluster.
func (v *Validating) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	cluster, ok := requestCluster(ctx, a)
	if !ok {
		return nil
	}
	hooks, matcher, err := v.kind.hooks(v.deps, a, cluster)
	if err != nil || len(hooks) == 0 {
		return err
	}
	return validating.NewDispatcher(v.deps.Authorizer, generic.NewPolicyMatcher(matcher)).Dispatch(ctx, a, o, hooks)
}

// params returns a live reader of the params of kind pk in cluster, and
// their scope.
func (d Dependencies) params(cluster logicalcluster.Name, pk *admissionregistrationv1.ParamKind) (clientgoinformers.GenericInformer, meta.RESTScope, error) {
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("paramKind %s: %w", pk.APIVersion, err)
	}
	gvk := gv.WithKind(pk.Kind)
	gvr, namespaced, err := d.ResolveParam(cluster, gvk)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to find resource referenced by paramKind: '%v': %w", gvk, err)
	}
	client, err := d.Params.For(cluster)
	if err != nil {
		return nil, nil, err
	}
	scope := meta.RESTScopeRoot
	if namespaced {
		scope = meta.RESTScopeNamespace
	}
	return liveParams{client: client.Resource(gvr), gvk: gvk}, scope, nil
}

// liveParams is the informer upstream's dispatcher reads params from,
// reading them from the API when asked instead of keeping a cache of the
// kind in every logical cluster.
type liveParams struct {
	client    dynamic.NamespaceableResourceInterface
	gvk       schema.GroupVersionKind
	namespace string
}

var _ clientgoinformers.GenericInformer = liveParams{}

func (p liveParams) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (p liveParams) Lister() cache.GenericLister         { return p }

// ByNamespace implements cache.GenericLister.
func (p liveParams) ByNamespace(namespace string) cache.GenericNamespaceLister {
	p.namespace = namespace
	return p
}

func (p liveParams) resource() dynamic.ResourceInterface {
	if p.namespace == "" {
		return p.client
	}
	return p.client.Namespace(p.namespace)
}

// Get implements cache.GenericLister.
func (p liveParams) Get(name string) (runtime.Object, error) {
	ctx, cancel := context.WithTimeout(context.Background(), paramTimeout)
	defer cancel()
	u, err := p.resource().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return p.asInformerObject(u)
}

// List implements cache.GenericLister.
func (p liveParams) List(selector labels.Selector) ([]runtime.Object, error) {
	ctx, cancel := context.WithTimeout(context.Background(), paramTimeout)
	defer cancel()
	list, err := p.resource().List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(list.Items))
	for i := range list.Items {
		obj, err := p.asInformerObject(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// asInformerObject makes a param look as an informer would hand it to
// upstream's plugin: typed for the kinds client-go knows, unstructured
// otherwise, without type meta.
func (p liveParams) asInformerObject(u *unstructured.Unstructured) (runtime.Object, error) {
	typed, err := clientgoscheme.Scheme.New(p.gvk)
	if err != nil {
		u = u.DeepCopy()
		u.SetAPIVersion("")
		u.SetKind("")
		return u, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, fmt.Errorf("converting param %s: %w", u.GetName(), err)
	}
	typed.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return typed, nil
}

// syncedInformer is an informer that has always synced; upstream's
// dispatcher only asks it that.
type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }
