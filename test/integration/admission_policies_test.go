package integration

import (
	"context"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
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
