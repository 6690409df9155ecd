package policies

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// allowAll is an authorizer that allows what the tests ask.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// testPolicies exercise every part compile assembles: variables, match
// conditions, validations with messages, message expressions and reasons,
// audit annotations, params, the authorizer, runtime errors under both
// failure policies, and expressions that do not compile.
func testPolicies() []*admissionregistrationv1.ValidatingAdmissionPolicy {
	rules := &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{}, MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}, Scope: ptr.To(admissionregistrationv1.AllScopes)},
		}}},
	}
	policy := func(name string, fail admissionregistrationv1.FailurePolicyType, params bool, edit func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "name", Generation: 1}, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(fail), MatchConstraints: rules.DeepCopy(),
		}}
		if params {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		}
		edit(&p.Spec)
		return p
	}
	return []*admissionregistrationv1.ValidatingAdmissionPolicy{
		policy("size", admissionregistrationv1.Fail, true, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []admissionregistrationv1.Variable{{Name: "n", Expression: "has(object.data) ? size(object.data) : 0"}}
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "unlabelled", Expression: "!has(object.metadata.labels) || !('skip' in object.metadata.labels)"}}
			s.Validations = []admissionregistrationv1.Validation{
				{Expression: "variables.n <= int(params.data.max)", MessageExpression: "'at most ' + params.data.max + ' keys, not ' + string(variables.n)", Reason: ptr.To(metav1.StatusReasonInvalid)},
				{Expression: "!('secret' in object.data)", Message: "no secrets in configmaps"},
			}
			s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "keys", ValueExpression: "string(variables.n)"}}
		}),
		policy("authz", admissionregistrationv1.Fail, false, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations = []admissionregistrationv1.Validation{{Expression: "authorizer.group('').resource('secrets').check('get').allowed()", Reason: ptr.To(metav1.StatusReasonForbidden)}}
		}),
		policy("runtime-error-fail", admissionregistrationv1.Fail, false, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations = []admissionregistrationv1.Validation{{Expression: "object.data.missing == 'x'"}}
		}),
		policy("runtime-error-ignore", admissionregistrationv1.Ignore, false, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations = []admissionregistrationv1.Validation{{Expression: "object.data.missing == 'x'"}}
		}),
		policy("does-not-compile", admissionregistrationv1.Fail, false, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations = []admissionregistrationv1.Validation{{Expression: "object.data.("}}
		}),
	}
}

func testBinding(policy string) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: policy}, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName: policy, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
	}}
	if policy == "size" {
		b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "default", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
	}
	return b
}

func testRequests() map[string]*corev1.ConfigMap {
	cm := func(labels map[string]string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default", Labels: labels}, Data: data}
	}
	return map[string]*corev1.ConfigMap{
		"empty":         cm(nil, nil),
		"within":        cm(nil, map[string]string{"a": "1", "b": "2"}),
		"too many":      cm(nil, map[string]string{"a": "1", "b": "2", "c": "3"}),
		"too many skip": cm(map[string]string{"skip": "y"}, map[string]string{"a": "1", "b": "2", "c": "3"}),
		"secret":        cm(nil, map[string]string{"secret": "s"}),
		"has missing":   cm(nil, map[string]string{"missing": "x"}),
	}
}

// TestCompileMatchesUpstream runs every test policy alone, on every test
// request, once through upstream's ValidatingAdmissionPolicy plugin and
// once through upstream's dispatcher with policies compiled by compile,
// and wants the same answer each time.
func TestCompileMatchesUpstream(t *testing.T) {
	defer generic.SetPolicyRefreshIntervalForTests(10 * time.Millisecond)()
	limits := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"}, Data: map[string]string{"max": "2"}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	o := admission.NewObjectInterfacesFromScheme(scheme)
	gvk, gvr := corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithResource("configmaps")
	alice := &user.DefaultInfo{Name: "alice"}

	// What some answers must say, so that the comparison is not between
	// two plugins that do nothing.
	expected := map[string]string{
		"size/too many":                  "at most 2 keys, not 3",
		"size/secret":                    "no secrets in configmaps",
		"size/within":                    "<nil>",
		"size/too many skip":             "<nil>",
		"runtime-error-fail/empty":       "denied request",
		"runtime-error-ignore/empty":     "<nil>",
		"does-not-compile/within":        "denied request",
		"runtime-error-fail/has missing": "<nil>",
	}
	for _, p := range testPolicies() {
		t.Run(p.Name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			client := fake.NewClientset(p, testBinding(p.Name), limits, ns)
			factory := clientgoinformers.NewSharedInformerFactory(client, 0)
			up, err := validating.NewPlugin(nil)
			if err != nil {
				t.Fatal(err)
			}
			up.SetExternalKubeInformerFactory(factory)
			up.SetExternalKubeClientSet(client)
			up.SetRESTMapper(mapper)
			up.SetDynamicClient(dynamicfake.NewSimpleDynamicClient(scheme, limits))
			up.SetDrainedNotification(ctx.Done())
			up.SetUnconditionalAuthorizer(allowAll{})
			if err := up.ValidateInitialization(); err != nil {
				t.Fatal(err)
			}
			cms, err := factory.ForResource(corev1.SchemeGroupVersion.WithResource("configmaps"))
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())

			hook := validating.PolicyHook{Policy: p, Bindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{testBinding(p.Name)}, Evaluator: compile(p)}
			if p.Spec.ParamKind != nil {
				hook.ParamInformer, hook.ParamScope = cms, meta.RESTScopeNamespace
			}
			ours := validating.NewDispatcher(allowAll{}, generic.NewPolicyMatcher(matching.NewMatcher(factory.Core().V1().Namespaces().Lister(), client)))

			for name, obj := range testRequests() {
				attrs := func() admission.Attributes {
					return admission.NewAttributesRecord(obj.DeepCopy(), nil, gvk, "default", "cm", gvr, "", admission.Create, &metav1.CreateOptions{}, false, alice)
				}
				want := fmt.Sprint(waitForUpstream(t, ctx, up, attrs, o))
				got := fmt.Sprint(ours.Dispatch(ctx, attrs(), o, []validating.PolicyHook{hook}))
				if got != want {
					t.Errorf("%s: compile gives %q, upstream %q", name, got, want)
				}
				if expect := expected[p.Name+"/"+name]; expect != "" && !strings.Contains(want, expect) {
					t.Errorf("%s: upstream answers %q, want it to say %q", name, want, expect)
				}
			}
		})
	}
}

// waitForUpstream asks upstream's plugin until its policy source has
// loaded the policy (it answers "not yet ready" until then).
func waitForUpstream(t *testing.T, ctx context.Context, up *validating.Plugin, attrs func() admission.Attributes, o admission.ObjectInterfaces) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := up.Validate(ctx, attrs(), o)
		if err == nil || !strings.Contains(err.Error(), "not yet ready") || time.Now().After(deadline) {
			if err == nil {
				// The source may not have its first policies yet:
				// ask again once they are surely loaded.
				time.Sleep(50 * time.Millisecond)
				err = up.Validate(ctx, attrs(), o)
			}
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
