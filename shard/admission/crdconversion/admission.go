// Package crdconversion refuses CustomResourceDefinitions with webhook
// conversion: a shard serves custom resources of many tenants and does not
// call webhooks of theirs to convert objects (kcp does not support them
// either). Only the None strategy is accepted.
package crdconversion

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
)

// PluginName is the name of the plugin.
const PluginName = "CRDConversion"

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// Validate refuses a CRD whose conversion strategy is Webhook.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != apiextensionsv1.Resource("customresourcedefinitions") || a.GetSubresource() != "" {
		return nil
	}
	var strategy string
	switch crd := a.GetObject().(type) {
	case *apiextensions.CustomResourceDefinition:
		if crd.Spec.Conversion != nil {
			strategy = string(crd.Spec.Conversion.Strategy)
		}
	case *apiextensionsv1.CustomResourceDefinition:
		if crd.Spec.Conversion != nil {
			strategy = string(crd.Spec.Conversion.Strategy)
		}
	default:
		return apierrors.NewInternalError(fmt.Errorf("unexpected CRD type %T", a.GetObject()))
	}
	if strategy != string(apiextensionsv1.WebhookConverter) {
		return nil
	}
	return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), field.ErrorList{
		field.NotSupported(field.NewPath("spec", "conversion", "strategy"), strategy, []string{string(apiextensionsv1.NoneConverter)}),
	})
}
