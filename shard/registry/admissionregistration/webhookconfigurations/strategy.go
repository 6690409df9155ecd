package webhookconfigurations

import (
	"context"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
)

// MutatingStrategy implements the create, update and delete behaviour of
// mutating webhook configurations. metadata.generation counts changes of
// the webhooks, so admission can tell which configuration it runs.
type MutatingStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	validator *Validator
}

// ValidatingStrategy implements the create, update and delete behaviour of
// validating webhook configurations, like MutatingStrategy.
type ValidatingStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	validator *Validator
}

var (
	_ rest.RESTCreateUpdateStrategy = MutatingStrategy{}
	_ rest.RESTCreateUpdateStrategy = ValidatingStrategy{}
)

// NewMutatingStrategy returns the strategy of mutating webhook
// configurations, typing objects with typer and validating with validator.
func NewMutatingStrategy(typer runtime.ObjectTyper, validator *Validator) MutatingStrategy {
	return MutatingStrategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, validator: validator}
}

// NewValidatingStrategy returns the strategy of validating webhook
// configurations, typing objects with typer and validating with validator.
func NewValidatingStrategy(typer runtime.ObjectTyper, validator *Validator) ValidatingStrategy {
	return ValidatingStrategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, validator: validator}
}

// NamespaceScoped is false: webhook configurations are cluster-scoped.
func (MutatingStrategy) NamespaceScoped() bool { return false }

// PrepareForCreate sets the generation to 1.
func (MutatingStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Generation = 1
}

// PrepareForUpdate increments the generation when the webhooks change.
func (MutatingStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cfg, oldCfg := obj.(*admissionregistrationv1.MutatingWebhookConfiguration), old.(*admissionregistrationv1.MutatingWebhookConfiguration)
	cfg.Generation = oldCfg.Generation
	if !reflect.DeepEqual(cfg.Webhooks, oldCfg.Webhooks) {
		cfg.Generation = oldCfg.Generation + 1
	}
}

// Validate validates a new configuration.
func (s MutatingStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validator.ValidateMutating(obj.(*admissionregistrationv1.MutatingWebhookConfiguration))
}

// WarningsOnCreate returns no warnings.
func (MutatingStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (MutatingStrategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: PUT does not create configurations.
func (MutatingStrategy) AllowCreateOnUpdate(context.Context) bool { return false }

// ValidateUpdate validates an update.
func (s MutatingStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validator.ValidateMutatingUpdate(obj.(*admissionregistrationv1.MutatingWebhookConfiguration), old.(*admissionregistrationv1.MutatingWebhookConfiguration))
}

// WarningsOnUpdate returns no warnings.
func (MutatingStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (MutatingStrategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// NamespaceScoped is false: webhook configurations are cluster-scoped.
func (ValidatingStrategy) NamespaceScoped() bool { return false }

// PrepareForCreate sets the generation to 1.
func (ValidatingStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Generation = 1
}

// PrepareForUpdate increments the generation when the webhooks change.
func (ValidatingStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cfg, oldCfg := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration), old.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	cfg.Generation = oldCfg.Generation
	if !reflect.DeepEqual(cfg.Webhooks, oldCfg.Webhooks) {
		cfg.Generation = oldCfg.Generation + 1
	}
}

// Validate validates a new configuration.
func (s ValidatingStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validator.ValidateValidating(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
}

// WarningsOnCreate returns no warnings.
func (ValidatingStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (ValidatingStrategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: PUT does not create configurations.
func (ValidatingStrategy) AllowCreateOnUpdate(context.Context) bool { return false }

// ValidateUpdate validates an update.
func (s ValidatingStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validator.ValidateValidatingUpdate(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration), old.(*admissionregistrationv1.ValidatingWebhookConfiguration))
}

// WarningsOnUpdate returns no warnings.
func (ValidatingStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (ValidatingStrategy) AllowUnconditionalUpdate(context.Context) bool { return true }
