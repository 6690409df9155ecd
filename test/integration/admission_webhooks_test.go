package integration

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// hookRule matches CREATE and UPDATE of resources of group in v1.
func hookRule(group string, resources ...string) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: resources},
	}}
}

func mutatingHook(h *hookServer, name, path string, rules []admissionregistrationv1.RuleWithOperations, edit ...func(*admissionregistrationv1.MutatingWebhook)) *admissionregistrationv1.MutatingWebhookConfiguration {
	w := admissionregistrationv1.MutatingWebhook{
		Name:                    name + ".hooks.tessera.test",
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(h.url(path)), CABundle: h.caPEM},
		Rules:                   rules,
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
	for _, e := range edit {
		e(&w)
	}
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{w},
	}
}

func validatingHook(h *hookServer, name, path string, rules []admissionregistrationv1.RuleWithOperations, edit ...func(*admissionregistrationv1.ValidatingWebhook)) *admissionregistrationv1.ValidatingWebhookConfiguration {
	w := admissionregistrationv1.ValidatingWebhook{
		Name:                    name + ".hooks.tessera.test",
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(h.url(path)), CABundle: h.caPEM},
		Rules:                   rules,
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
	for _, e := range edit {
		e(&w)
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{w},
	}
}

var probeCount atomic.Int64

// probeName returns a fresh object name starting with prefix.
func probeName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, probeCount.Add(1)) }

// untilHooked creates probe ConfigMaps named prefix-N in namespace of
// client until one is seen by the webhook on path, i.e. until a new
// configuration has reached the shard's informer.
func untilHooked(t *testing.T, client kubernetes.Interface, h *hookServer, namespace, path, prefix string) {
	t.Helper()
	eventually(t, 30*time.Second, "the webhook on "+path+" to be called", func(ctx context.Context) (bool, error) {
		name := probeName(prefix)
		_, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return len(h.callsFor(path, name)) > 0, err
	})
}

func createLabelledConfigMap(ctx context.Context, client kubernetes.Interface, namespace, name string, labels map[string]string, opts ...func(*metav1.CreateOptions)) (*corev1.ConfigMap, error) {
	o := metav1.CreateOptions{}
	for _, f := range opts {
		f(&o)
	}
	return client.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, o)
}

// TestAdmissionWebhooksPerCluster calls real HTTPS webhooks configured in
// one logical cluster and checks that they take effect there, with
// upstream's semantics, and nowhere else.
func TestAdmissionWebhooksPerCluster(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("hooks-a"), logicalcluster.Name("hooks-b")
	createCluster(t, s, a)
	createCluster(t, s, b)
	ka, kb := kube(t, s, a), kube(t, s, b)
	h := startHookServer(t)
	ctx := t.Context()

	// Cluster a labels every ConfigMap it creates.
	if _, err := ka.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx,
		mutatingHook(h, "label", "/label/hooked", hookRule("", "configmaps")), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the mutating webhook configuration: %v", err)
	}
	untilHooked(t, ka, h, "default", "/label/hooked", "probe")

	t.Run("mutates in its own cluster only", func(t *testing.T) {
		cm, err := createLabelledConfigMap(ctx, ka, "default", "mutated", nil)
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels["hooked"] != "set" {
			t.Errorf("ConfigMap in %s has labels %v, want hooked=set from the webhook", a, cm.Labels)
		}
		other, err := createLabelledConfigMap(ctx, kb, "default", "untouched", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(other.Labels) != 0 {
			t.Errorf("ConfigMap in %s has labels %v, want none: the webhook is %s's", b, other.Labels, a)
		}
		if calls := h.callsNamed("untouched"); len(calls) != 0 {
			t.Errorf("the webhook of %s was called for %s: %+v", a, b, calls)
		}
		if calls := h.callsFor("/label/hooked", "mutated"); len(calls) != 1 || calls[0].user == "" {
			t.Errorf("calls for the mutated ConfigMap: %+v", calls)
		}
	})

	t.Run("dry run reaches side-effect-free webhooks flagged", func(t *testing.T) {
		cm, err := createLabelledConfigMap(ctx, ka, "default", "dry", nil, func(o *metav1.CreateOptions) { o.DryRun = []string{metav1.DryRunAll} })
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels["hooked"] != "set" {
			t.Errorf("dry-run ConfigMap has labels %v, want the webhook's", cm.Labels)
		}
		calls := h.callsFor("/label/hooked", "dry")
		if len(calls) != 1 || !calls[0].dryRun {
			t.Errorf("dry-run calls %+v, want one with dryRun", calls)
		}
		if _, err := ka.CoreV1().ConfigMaps("default").Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("dry-run ConfigMap was stored: %v", err)
		}
	})

	t.Run("failurePolicy Fail refuses while the webhook is down, Ignore admits", func(t *testing.T) {
		down := "https://127.0.0.1:1/down"
		fail := validatingHook(h, "down-fail", "/allow", hookRule("", "secrets"), func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ClientConfig.URL = ptr.To(down)
			w.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"policy": "fail"}}
		})
		ignore := validatingHook(h, "down-ignore", "/allow", hookRule("", "secrets"), func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ClientConfig.URL = ptr.To(down)
			w.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"policy": "ignore"}}
		})
		for _, cfg := range []*admissionregistrationv1.ValidatingWebhookConfiguration{fail, ignore} {
			if _, err := ka.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		secret := func(name, policy string) *corev1.Secret {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"policy": policy}}}
		}
		var lastErr error
		eventually(t, 30*time.Second, "a secret to be refused by the failing webhook", func(ctx context.Context) (bool, error) {
			_, lastErr = ka.CoreV1().Secrets("default").Create(ctx, secret(probeName("fail"), "fail"), metav1.CreateOptions{})
			return lastErr != nil, nil
		})
		if !strings.Contains(lastErr.Error(), "failed calling webhook") || !strings.Contains(lastErr.Error(), "down-fail.hooks.tessera.test") {
			t.Errorf("refusal %q does not name the failed webhook", lastErr)
		}
		if _, err := ka.CoreV1().Secrets("default").Create(ctx, secret("ignored", "ignore"), metav1.CreateOptions{}); err != nil {
			t.Errorf("failurePolicy Ignore refused: %v", err)
		}
		if _, err := kb.CoreV1().Secrets("default").Create(ctx, secret("elsewhere", "fail"), metav1.CreateOptions{}); err != nil {
			t.Errorf("the failing webhook of %s refused in %s: %v", a, b, err)
		}
	})

	t.Run("timeoutSeconds bounds a slow webhook", func(t *testing.T) {
		slow := validatingHook(h, "slow", "/slow", hookRule("", "configmaps"), func(w *admissionregistrationv1.ValidatingWebhook) {
			w.TimeoutSeconds = ptr.To[int32](1)
			w.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"speed": "slow"}}
		})
		if _, err := ka.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, slow, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var lastErr error
		var took time.Duration
		eventually(t, 30*time.Second, "the slow webhook to time out", func(ctx context.Context) (bool, error) {
			start := time.Now()
			_, lastErr = createLabelledConfigMap(ctx, ka, "default", probeName("slow"), map[string]string{"speed": "slow"})
			took = time.Since(start)
			return lastErr != nil, nil
		})
		if !strings.Contains(lastErr.Error(), "slow.hooks.tessera.test") || took > 2900*time.Millisecond {
			t.Errorf("slow webhook: %v after %v, want a timeout after about a second", lastErr, took)
		}
	})

	t.Run("matchConditions, namespaceSelector and objectSelector filter", func(t *testing.T) {
		if _, err := ka.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Labels: map[string]string{"guard": "on"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deny := validatingHook(h, "deny", "/deny", hookRule("", "configmaps"), func(w *admissionregistrationv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"guard": "on"}}
			w.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "exempt", Operator: metav1.LabelSelectorOpDoesNotExist}}}
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "deny-prefix", Expression: "object.metadata.name.startsWith('deny-')"}}
		})
		if _, err := ka.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, deny, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var lastErr error
		eventually(t, 30*time.Second, "the denying webhook", func(ctx context.Context) (bool, error) {
			_, lastErr = createLabelledConfigMap(ctx, ka, "guarded", probeName("deny-probe"), nil)
			return lastErr != nil, nil
		})
		if !apierrors.IsForbidden(lastErr) || !strings.Contains(lastErr.Error(), "denied by the test webhook") {
			t.Errorf("refusal %v, want 403 with the webhook's message", lastErr)
		}
		for _, tc := range []struct {
			namespace, name string
			labels          map[string]string
			why             string
		}{
			{"guarded", "allowed-name", nil, "matchConditions exclude names without deny-"},
			{"default", "deny-unguarded", nil, "namespaceSelector excludes default"},
			{"guarded", "deny-exempt", map[string]string{"exempt": "yes"}, "objectSelector excludes exempt objects"},
		} {
			if _, err := createLabelledConfigMap(ctx, ka, tc.namespace, tc.name, tc.labels); err != nil {
				t.Errorf("%s/%s refused (%s): %v", tc.namespace, tc.name, tc.why, err)
			}
			if calls := h.callsFor("/deny", tc.name); len(calls) != 0 {
				t.Errorf("%s/%s reached the webhook (%s)", tc.namespace, tc.name, tc.why)
			}
		}
		// A namespace of the same name and labels in b is not guarded.
		if _, err := kb.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Labels: map[string]string{"guard": "on"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := createLabelledConfigMap(ctx, kb, "guarded", "deny-in-b", nil); err != nil {
			t.Errorf("the webhook of %s refused in %s: %v", a, b, err)
		}
	})

	t.Run("reinvocationPolicy IfNeeded calls a webhook again after a later one mutated", func(t *testing.T) {
		first := mutatingHook(h, "reinvoke-1", "/label/first", hookRule("", "configmaps"), func(w *admissionregistrationv1.MutatingWebhook) {
			w.ReinvocationPolicy = ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy)
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"reinvoke": "yes"}}
		})
		second := mutatingHook(h, "reinvoke-2", "/label/second", hookRule("", "configmaps"), func(w *admissionregistrationv1.MutatingWebhook) {
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"reinvoke": "yes"}}
		})
		for _, cfg := range []*admissionregistrationv1.MutatingWebhookConfiguration{first, second} {
			if _, err := ka.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var name string
		eventually(t, 30*time.Second, "both mutating webhooks", func(ctx context.Context) (bool, error) {
			name = probeName("reinvoke")
			cm, err := createLabelledConfigMap(ctx, ka, "default", name, map[string]string{"reinvoke": "yes"})
			return err == nil && cm.Labels["first"] == "set" && cm.Labels["second"] == "set", err
		})
		if n := len(h.callsFor("/label/first", name)); n != 2 {
			t.Errorf("the IfNeeded webhook was called %d times, want 2 (once more after the second webhook mutated)", n)
		}
		if n := len(h.callsFor("/label/second", name)); n != 1 {
			t.Errorf("the Never webhook was called %d times, want 1", n)
		}
	})

	t.Run("custom resources", func(t *testing.T) {
		mustCreateWidgetCRD(t, s, a)
		mustCreateWidgetCRD(t, s, b)
		if _, err := ka.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx,
			mutatingHook(h, "widgets", "/label/widget", hookRule("example.com", "widgets")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		dynA, dynB := lifecycleDynamicClient(t, s, a), lifecycleDynamicClient(t, s, b)
		eventually(t, 30*time.Second, "the widget webhook", func(ctx context.Context) (bool, error) {
			w := mustCreateWidget(t, dynA, "default", probeName("widget"))
			return w.GetLabels()["widget"] == "set", nil
		})
		if w := mustCreateWidget(t, dynB, "default", "widget-in-b"); len(w.GetLabels()) != 0 {
			t.Errorf("widget in %s was mutated by %s's webhook: %v", b, a, w.GetLabels())
		}
	})

	t.Run("deleting the configuration stops the calls", func(t *testing.T) {
		if err := ka.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "label", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the deleted webhook to be forgotten", func(ctx context.Context) (bool, error) {
			cm, err := createLabelledConfigMap(ctx, ka, "default", probeName("after"), nil)
			return err == nil && cm.Labels["hooked"] == "", err
		})
	})
}

// TestWebhookServiceReferencesAreRefused: logical clusters have no
// Services, so a webhook that names one could never be called; it is
// refused when written instead of being stored and ignored.
func TestWebhookServiceReferencesAreRefused(t *testing.T) {
	s := framework.StartShard(t)
	a := logicalcluster.Name("hooks-svc")
	createCluster(t, s, a)
	h := startHookServer(t)
	cfg := validatingHook(h, "svc", "/allow", hookRule("", "configmaps"), func(w *admissionregistrationv1.ValidatingWebhook) {
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hook"}}
	})
	_, err := kube(t, s, a).AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(t.Context(), cfg, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "logical clusters have no Services") {
		t.Fatalf("creating a webhook with a service reference: %v, want 422 naming the reason", err)
	}
	out, err := s.Kubectl(a, "get", "validatingwebhookconfigurations", "-o", "name")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("configurations after the refusal: %q %v", out, err)
	}
}

// TestAdmissionWebhooksWithFewPluginsKept keeps the plugin of one cluster
// only, so that two clusters take turns building theirs: each still calls
// its own webhooks only, and configuration changes made while a cluster's
// plugin was dropped, or kept, take effect.
func TestAdmissionWebhooksWithFewPluginsKept(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) { o.AdmissionWebhookClusters = 1 })
	h := startHookServer(t)
	ctx := t.Context()
	names := []logicalcluster.Name{"few-1", "few-2"}
	clients := map[logicalcluster.Name]kubernetes.Interface{}
	for _, c := range names {
		createCluster(t, s, c)
		clients[c] = kube(t, s, c)
		if _, err := clients[c].AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx,
			mutatingHook(h, "label", "/label/"+string(c), hookRule("", "configmaps")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	labelsOf := func(c logicalcluster.Name) map[string]string {
		t.Helper()
		cm, err := createLabelledConfigMap(ctx, clients[c], "default", probeName(string(c)), nil)
		if err != nil {
			t.Fatalf("creating a ConfigMap in %s: %v", c, err)
		}
		return cm.Labels
	}
	for _, c := range names {
		eventually(t, 30*time.Second, "the webhook of "+string(c), func(context.Context) (bool, error) {
			return labelsOf(c)[string(c)] == "set", nil
		})
	}
	for i := 0; i < 6; i++ {
		c := names[i%2]
		if got := labelsOf(c); len(got) != 1 || got[string(c)] != "set" {
			t.Fatalf("round %d: ConfigMap in %s has labels %v, want only %s=set", i, c, got, c)
		}
	}
	// few-1's plugin is dropped once few-2 is used; change both: few-1's
	// change is read when its plugin is built again, few-2's arrives as an
	// event.
	labelsOf("few-2")
	for _, c := range []logicalcluster.Name{"few-1", "few-2"} {
		cfg, err := clients[c].AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "label", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Webhooks[0].ClientConfig.URL = ptr.To(h.url("/label/changed-" + string(c)))
		if _, err := clients[c].AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []logicalcluster.Name{"few-2", "few-1", "few-2"} {
		eventually(t, 30*time.Second, "the changed webhook of "+string(c), func(context.Context) (bool, error) {
			got := labelsOf(c)
			return len(got) == 1 && got["changed-"+string(c)] == "set", nil
		})
	}
}
