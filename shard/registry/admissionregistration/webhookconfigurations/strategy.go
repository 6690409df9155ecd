package webhookconfigurations

import (
	"context"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// configuration is a mutating or a validating webhook configuration.
type configuration interface {
	runtime.Object
	metav1.Object
}

// Strategy implements the create, update and delete behaviour of webhook
// configurations of type T. metadata.generation counts changes of the
// webhooks, so admission can tell which configuration it runs.
type Strategy[T configuration] struct {
	store.Strategy[T]
	webhooks func(T) any
}

// MutatingStrategy is the strategy of mutating webhook configurations.
type MutatingStrategy = Strategy[*admissionregistrationv1.MutatingWebhookConfiguration]

// ValidatingStrategy is the strategy of validating webhook configurations.
type ValidatingStrategy = Strategy[*admissionregistrationv1.ValidatingWebhookConfiguration]

var (
	_ rest.RESTCreateUpdateStrategy = MutatingStrategy{}
	_ rest.RESTCreateUpdateStrategy = ValidatingStrategy{}
)

// NewMutatingStrategy returns the strategy of mutating webhook
// configurations, typing objects with typer and validating with validator.
func NewMutatingStrategy(typer runtime.ObjectTyper, validator *Validator) MutatingStrategy {
	return MutatingStrategy{
		Strategy: store.NewStrategy(typer, store.ClusterScoped, validator.ValidateMutating, validator.ValidateMutatingUpdate),
		webhooks: func(cfg *admissionregistrationv1.MutatingWebhookConfiguration) any { return cfg.Webhooks },
	}
}

// NewValidatingStrategy returns the strategy of validating webhook
// configurations, typing objects with typer and validating with validator.
func NewValidatingStrategy(typer runtime.ObjectTyper, validator *Validator) ValidatingStrategy {
	return ValidatingStrategy{
		Strategy: store.NewStrategy(typer, store.ClusterScoped, validator.ValidateValidating, validator.ValidateValidatingUpdate),
		webhooks: func(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) any { return cfg.Webhooks },
	}
}

// PrepareForCreate sets the generation to 1.
func (Strategy[T]) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(T).SetGeneration(1)
}

// PrepareForUpdate increments the generation when the webhooks change.
func (s Strategy[T]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cfg, oldCfg := obj.(T), old.(T)
	cfg.SetGeneration(oldCfg.GetGeneration())
	if !reflect.DeepEqual(s.webhooks(cfg), s.webhooks(oldCfg)) {
		cfg.SetGeneration(oldCfg.GetGeneration() + 1)
	}
}
