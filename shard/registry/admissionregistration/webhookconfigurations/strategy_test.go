package webhookconfigurations

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestDefaults(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cfg := mutating(func(w *admissionregistrationv1.MutatingWebhook) {
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: service()}
	})
	s.Default(cfg)
	w := cfg.Webhooks[0]
	if *w.FailurePolicy != admissionregistrationv1.Fail || *w.MatchPolicy != admissionregistrationv1.Equivalent ||
		*w.TimeoutSeconds != 10 || *w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy {
		t.Errorf("policies: %+v", w)
	}
	if diff := cmp.Diff(&metav1.LabelSelector{}, w.NamespaceSelector); diff != "" {
		t.Errorf("namespaceSelector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&metav1.LabelSelector{}, w.ObjectSelector); diff != "" {
		t.Errorf("objectSelector (-want +got):\n%s", diff)
	}
	if *w.Rules[0].Scope != admissionregistrationv1.AllScopes {
		t.Errorf("rule scope %q", *w.Rules[0].Scope)
	}
	if *w.ClientConfig.Service.Port != 443 {
		t.Errorf("service port %d", *w.ClientConfig.Service.Port)
	}

	kept := validating(func(w *admissionregistrationv1.ValidatingWebhook) {
		w.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
		w.TimeoutSeconds = ptr.To[int32](3)
	})
	list := &admissionregistrationv1.ValidatingWebhookConfigurationList{Items: []admissionregistrationv1.ValidatingWebhookConfiguration{*kept}}
	s.Default(list)
	got := list.Items[0].Webhooks[0]
	if *got.FailurePolicy != admissionregistrationv1.Ignore || *got.TimeoutSeconds != 3 || *got.MatchPolicy != admissionregistrationv1.Equivalent {
		t.Errorf("validating defaults: %+v", got)
	}
}

func TestGeneration(t *testing.T) {
	strategy := NewValidatingStrategy(runtime.NewScheme(), NewValidator())
	cfg := validating()
	strategy.PrepareForCreate(t.Context(), cfg)
	if cfg.Generation != 1 {
		t.Fatalf("generation after create %d, want 1", cfg.Generation)
	}
	relabeled := cfg.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	strategy.PrepareForUpdate(t.Context(), relabeled, cfg)
	if relabeled.Generation != 1 {
		t.Errorf("generation after relabel %d, want 1", relabeled.Generation)
	}
	changed := cfg.DeepCopy()
	changed.Webhooks[0].TimeoutSeconds = ptr.To[int32](5)
	strategy.PrepareForUpdate(t.Context(), changed, cfg)
	if changed.Generation != 2 {
		t.Errorf("generation after webhook change %d, want 2", changed.Generation)
	}

	mutatingStrategy := NewMutatingStrategy(runtime.NewScheme(), NewValidator())
	m := mutating(nil)
	mutatingStrategy.PrepareForCreate(t.Context(), m)
	m2 := m.DeepCopy()
	m2.Webhooks = nil
	mutatingStrategy.PrepareForUpdate(t.Context(), m2, m)
	if m.Generation != 1 || m2.Generation != 2 {
		t.Errorf("mutating generations %d %d, want 1 2", m.Generation, m2.Generation)
	}
}

func TestTableConvertors(t *testing.T) {
	cfg := validating()
	cfg.Webhooks = append(cfg.Webhooks, cfg.Webhooks[0])
	cfg.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	table, err := ValidatingTableConvertor().ConvertToTable(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Webhooks", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"policy", int64(2), "10d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	m := mutating(nil)
	m.CreationTimestamp = cfg.CreationTimestamp
	table, err = MutatingTableConvertor().ConvertToTable(t.Context(), &admissionregistrationv1.MutatingWebhookConfigurationList{Items: []admissionregistrationv1.MutatingWebhookConfiguration{*m}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"defaults", int64(1), "10d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("mutating cells (-want +got):\n%s", diff)
	}
}
