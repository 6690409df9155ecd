package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	mutatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	clientgoinformers "k8s.io/client-go/informers"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// replicasPolicy refuses widgets with more replicas than its ConfigMap
// param allows (data.maxReplicas).
func replicasPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "max-replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
				},
			}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-exempt", Expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"}},
			Variables:       []admissionregistrationv1.Variable{{Name: "replicas", Expression: "has(object.spec) && has(object.spec.replicas) ? object.spec.replicas : 1"}},
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "variables.replicas <= int(params.data.maxReplicas)",
				MessageExpression: "'replicas must be at most ' + params.data.maxReplicas + ', not ' + string(variables.replicas)",
				Reason:            ptr.To(metav1.StatusReasonInvalid),
			}},
		},
	}
}

func replicasBinding(actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "max-replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "max-replicas",
			ParamRef:          &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "default", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
			ValidationActions: actions,
		},
	}
}

func replicaWidget(name string, replicas int64, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"replicas": replicas},
	}}
	u.SetLabels(labels)
	return u
}

// TestValidatingAdmissionPolicies binds a policy with a ConfigMap param in
// cluster a, and checks that it refuses widgets with too many replicas
// there (with the message of its messageExpression and the 422 of its
// reason), honours its match condition, refuses while its param is
// missing, warns instead with a Warn binding, and does nothing in cluster
// b, which has the same CRD and no policy.
func TestValidatingAdmissionPolicies(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("vap-a"), logicalcluster.Name("vap-b")
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
		createCRD(t, s, c, testCRD("widgets", "", apiextensionsv1.ClusterScoped))
		waitForCRD(t, s, c, "widgets.example.com", "Established", established)
	}
	ctx := t.Context()
	policies := kube(t, s, a).AdmissionregistrationV1()
	if _, err := policies.ValidatingAdmissionPolicies().Create(ctx, replicasPolicy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := policies.ValidatingAdmissionPolicyBindings().Create(ctx, replicasBinding(admissionregistrationv1.Deny), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	aWidgets := dynamicFor(t, s, a).Resource(widgets)
	// Without its param, the binding denies.
	eventually(t, crdControllerTimeout, "the policy to deny without its param", func(ctx context.Context) (bool, error) {
		_, err := aWidgets.Create(ctx, replicaWidget("w0", 1, nil), metav1.CreateOptions{})
		if err == nil {
			_ = aWidgets.Delete(ctx, "w0", metav1.DeleteOptions{})
			return false, nil
		}
		return strings.Contains(err.Error(), "no params found"), nil
	})
	if _, err := kube(t, s, a).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"maxReplicas": "5"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := aWidgets.Create(ctx, replicaWidget("small", 5, nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a widget within the limit: %v", err)
	}
	_, err := aWidgets.Create(ctx, replicaWidget("big", 6, nil), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "replicas must be at most 5, not 6") || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request") {
		t.Fatalf("creating a widget beyond the limit: err = %v, want 422 with the policy's message", err)
	}
	// Updates are checked too.
	small, err := aWidgets.Get(ctx, "small", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(small.Object, int64(7), "spec", "replicas")
	if _, err := aWidgets.Update(ctx, small, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("updating a widget beyond the limit: err = %v, want 422", err)
	}
	// The match condition exempts labelled widgets.
	if _, err := aWidgets.Create(ctx, replicaWidget("exempt", 9, map[string]string{"exempt": "yes"}), metav1.CreateOptions{}); err != nil {
		t.Errorf("creating an exempt widget: %v", err)
	}
	// Cluster b has no policy.
	if _, err := dynamicFor(t, s, b).Resource(widgets).Create(ctx, replicaWidget("big", 6, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a big widget in cluster %s without policies: %v", b, err)
	}

	// A Warn binding lets the request through with a warning.
	if err := policies.ValidatingAdmissionPolicyBindings().Delete(ctx, "max-replicas", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := policies.ValidatingAdmissionPolicyBindings().Create(ctx, replicasBinding(admissionregistrationv1.Warn), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(s.Config(a))
	cfg.WarningHandler = warnings
	warned := dynamic.NewForConfigOrDie(cfg).Resource(widgets)
	eventually(t, crdControllerTimeout, "the Warn binding to take effect", func(ctx context.Context) (bool, error) {
		warnings.reset()
		name := "warned"
		_, err := warned.Create(ctx, replicaWidget(name, 8, nil), metav1.CreateOptions{})
		if err != nil {
			return false, nil
		}
		_ = warned.Delete(ctx, name, metav1.DeleteOptions{})
		return strings.Contains(strings.Join(warnings.get(), "\n"), "replicas must be at most 5, not 8"), nil
	})
}

// TestValidatingAdmissionPolicyValidation checks that policies and
// bindings that kube-apiserver refuses are refused with 422: expressions
// that do not compile, no validations, a binding without actions or with
// Deny and Warn.
func TestValidatingAdmissionPolicyValidation(t *testing.T) {
	s := framework.StartShard(t)
	c := logicalcluster.Name("vap-validation")
	createCluster(t, s, c)
	ctx := t.Context()
	client := kube(t, s, c).AdmissionregistrationV1()

	bad := replicasPolicy()
	bad.Spec.Validations[0].Expression = "object.spec.replicas <="
	if _, err := client.ValidatingAdmissionPolicies().Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.validations[0].expression") {
		t.Errorf("a policy whose expression does not compile: err = %v, want 422 naming spec.validations[0].expression", err)
	}
	empty := replicasPolicy()
	empty.Spec.Validations = nil
	if _, err := client.ValidatingAdmissionPolicies().Create(ctx, empty, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a policy without validations: err = %v, want 422", err)
	}
	noParams := replicasPolicy()
	noParams.Spec.ParamKind = nil
	if _, err := client.ValidatingAdmissionPolicies().Create(ctx, noParams, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "params") {
		t.Errorf("a policy that uses params without a paramKind: err = %v, want 422", err)
	}
	created, err := client.ValidatingAdmissionPolicies().Create(ctx, replicasPolicy(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *created.Spec.FailurePolicy != admissionregistrationv1.Fail || *created.Spec.MatchConstraints.MatchPolicy != admissionregistrationv1.Equivalent || created.Generation != 1 {
		t.Errorf("defaults: failurePolicy %v, matchPolicy %v, generation %d", *created.Spec.FailurePolicy, *created.Spec.MatchConstraints.MatchPolicy, created.Generation)
	}
	if _, err := client.ValidatingAdmissionPolicyBindings().Create(ctx, replicasBinding(), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a binding without validation actions: err = %v, want 422", err)
	}
	if _, err := client.ValidatingAdmissionPolicyBindings().Create(ctx, replicasBinding(admissionregistrationv1.Deny, admissionregistrationv1.Warn), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a binding with Deny and Warn: err = %v, want 422", err)
	}
}

// warningRecorder keeps the warnings a client receives.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.warnings...)
}

func (w *warningRecorder) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = nil
}

// TestMutatingAdmissionPolicies binds two mutating policies in cluster a:
// one applies a configuration to configmaps (a label from a ConfigMap
// param), one JSON-patches widgets (a default for spec.replicas). Both
// take effect in a and nothing happens in b.
func TestMutatingAdmissionPolicies(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("map-a"), logicalcluster.Name("map-b")
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
		createCRD(t, s, c, testCRD("widgets", "", apiextensionsv1.ClusterScoped))
		waitForCRD(t, s, c, "widgets.example.com", "Established", established)
	}
	ctx := t.Context()
	if _, err := kube(t, s, a).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "team"}, Data: map[string]string{"name": "blue"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rules := func(group, resource string) *admissionregistrationv1.MatchResources {
		return &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}},
			},
		}}}
	}
	policies := kube(t, s, a).AdmissionregistrationV1()
	for _, p := range []*admissionregistrationv1.MutatingAdmissionPolicy{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "team-label"},
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
				ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
				MatchConstraints: rules("", "configmaps"),
				MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "not-the-param", Expression: "object.metadata.name != 'team'"}},
				Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: "Object{metadata: Object.metadata{labels: {'team': params.data.name}}}",
				}}},
				ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "default-replicas"},
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
				MatchConstraints: rules("example.com", "widgets"),
				Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{
					Expression: "has(object.spec) && has(object.spec.replicas) ? [] : [JSONPatch{op: 'add', path: '/spec', value: {'replicas': 3}}]",
				}}},
				ReinvocationPolicy: admissionregistrationv1.IfNeededReinvocationPolicy,
			},
		},
	} {
		if _, err := policies.MutatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s: %v", p.Name, err)
		}
	}
	for _, binding := range []*admissionregistrationv1.MutatingAdmissionPolicyBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "team-label"}, Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName: "team-label", ParamRef: &admissionregistrationv1.ParamRef{Name: "team", Namespace: "default", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "default-replicas"}, Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "default-replicas"}},
	} {
		if _, err := policies.MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating binding %s: %v", binding.Name, err)
		}
	}

	aConfigMaps := kube(t, s, a).CoreV1().ConfigMaps("default")
	n := 0
	eventually(t, crdControllerTimeout, "configmaps in "+string(a)+" to get the team label", func(ctx context.Context) (bool, error) {
		n++
		cm, err := aConfigMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", n)}}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return cm.Labels["team"] == "blue", nil
	})
	w, err := dynamicFor(t, s, a).Resource(widgets).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas"); r != 3 {
		t.Errorf("widget in %s: spec.replicas = %d, want the policy's default 3: %v", a, r, w.Object)
	}
	// Cluster b has no policies.
	cm, err := kube(t, s, b).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Labels) != 0 {
		t.Errorf("configmap in %s without policies got labels %v", b, cm.Labels)
	}
	w, err = dynamicFor(t, s, b).Resource(widgets).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(w.Object, "spec"); found {
		t.Errorf("widget in %s without policies was mutated: %v", b, w.Object)
	}

	// Upstream's own plugin, reading cluster a through the API, mutates the
	// same objects the same way: compileMutating and the shard's type
	// converters are pinned against upstream's.
	upstreamMutates(t, s, a, map[string]runtime.Object{
		"configmap": &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "compare", Namespace: "default"}},
		"widget": &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "compare"},
		}},
	}, func(name string, obj runtime.Object) {
		switch name {
		case "configmap":
			if got := obj.(*corev1.ConfigMap).Labels["team"]; got != "blue" {
				t.Errorf("upstream's plugin labels a configmap team=%q, the shard team=blue", got)
			}
		case "widget":
			if r, _, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "spec", "replicas"); r != 3 {
				t.Errorf("upstream's plugin defaults a widget's replicas to %d, the shard to 3", r)
			}
		}
	})

	// A policy that mutates deletions is refused, as in Kubernetes.
	bad := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints:   rules("", "configmaps"),
		Mutations:          []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[]"}}},
		ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
	}}
	bad.Spec.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
	if _, err := policies.MutatingAdmissionPolicies().Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a mutating policy for deletions: err = %v, want 422", err)
	}
}

// upstreamMutates runs k8s.io/apiserver's own MutatingAdmissionPolicy
// plugin, set up as kube-apiserver sets it up but reading the policies,
// params, namespaces and OpenAPI of logical cluster c through the shard's
// API, on each object as a create, and hands check the mutated object.
func upstreamMutates(t *testing.T, s *framework.Shard, c logicalcluster.Name, objects map[string]runtime.Object, check func(name string, obj runtime.Object)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	client := kube(t, s, c)
	factory := clientgoinformers.NewSharedInformerFactory(client, 0)
	up, err := mutatingpolicy.NewPlugin(nil)
	if err != nil {
		t.Fatal(err)
	}
	up.SetExternalKubeInformerFactory(factory)
	up.SetExternalKubeClientSet(client)
	up.SetRESTMapper(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery())))
	up.SetDynamicClient(dynamicFor(t, s, c))
	up.SetDrainedNotification(ctx.Done())
	up.SetUnconditionalAuthorizer(allowEverything{})
	up.SetEnabled(true)
	if err := up.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	o := admission.NewObjectInterfacesFromScheme(scheme)
	for name, obj := range objects {
		gvk := obj.GetObjectKind().GroupVersionKind()
		gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"}
		accessor, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		var mutated runtime.Object
		eventually(t, crdControllerTimeout, "upstream's plugin to mutate a "+name, func(ctx context.Context) (bool, error) {
			mutated = obj.DeepCopyObject()
			attrs := admission.NewAttributesRecord(mutated, nil, gvk, accessor.GetNamespace(), accessor.GetName(), gvr, "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
			if err := up.Admit(logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: c}), attrs, o); err != nil {
				return false, err
			}
			return !equality.Semantic.DeepEqual(mutated, obj), nil
		})
		check(name, mutated)
	}
}

// allowEverything is the authorizer upstream's plugin is given: the
// policies of the test do not ask it.
type allowEverything struct{}

func (allowEverything) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// TestValidatingAdmissionPolicyTypeChecking checks that the shard writes
// status.typeChecking as kube-controller-manager does: a policy that reads
// a field configmaps do not have gets a warning for that expression, a
// correct one none, both with their observed generation.
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	s := framework.StartShard(t)
	c := logicalcluster.Name("vap-typecheck")
	createCluster(t, s, c)
	ctx := t.Context()
	client := kube(t, s, c).AdmissionregistrationV1().ValidatingAdmissionPolicies()
	policy := func(name, expression string) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{Expression: expression}},
			},
		}
	}
	for _, p := range []*admissionregistrationv1.ValidatingAdmissionPolicy{
		policy("wrong-field", "object.spec.replicas > 1"),
		policy("right-field", "!has(object.data) || object.data.size() < 10"),
	} {
		if _, err := client.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var warnings map[string][]admissionregistrationv1.ExpressionWarning
	eventually(t, crdControllerTimeout, "both policies to be type-checked", func(ctx context.Context) (bool, error) {
		warnings = map[string][]admissionregistrationv1.ExpressionWarning{}
		for _, name := range []string{"wrong-field", "right-field"} {
			p, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Status.ObservedGeneration != p.Generation || p.Status.TypeChecking == nil {
				return false, nil
			}
			warnings[name] = p.Status.TypeChecking.ExpressionWarnings
		}
		return true, nil
	})
	if w := warnings["wrong-field"]; len(w) != 1 || w[0].FieldRef != "spec.validations[0].expression" || !strings.Contains(w[0].Warning, "spec") {
		t.Errorf("warnings of a policy reading a field configmaps lack: %+v", w)
	}
	if w := warnings["right-field"]; len(w) != 0 {
		t.Errorf("warnings of a correct policy: %+v", w)
	}
}
