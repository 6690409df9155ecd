package v1alpha1

import (
	"errors"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// SchemaFromCRD returns the APIResourceSchema <prefix>.<crd name> (that
// is <prefix>.<plural>.<group>) that defines what crd defines: its group,
// names, scope, versions with their schemas, subresources, printer columns
// and selectable fields, and its conversion. The CRD's status and metadata
// other than the name are not carried over.
func SchemaFromCRD(crd *apiextensionsv1.CustomResourceDefinition, prefix string) (*APIResourceSchema, error) {
	name := prefix + "." + crd.Name
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return nil, fmt.Errorf("the name %q made of the prefix and the CRD's name is not valid: %s", name, strings.Join(msgs, "; "))
	}
	s := &APIResourceSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "APIResourceSchema"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: APIResourceSchemaSpec{
			Group: crd.Spec.Group,
			Names: crd.Spec.Names,
			Scope: crd.Spec.Scope,
		},
	}
	if c := crd.Spec.Conversion; c != nil {
		conv := &CustomResourceConversion{Strategy: ConversionStrategyType(c.Strategy)}
		if c.Strategy == apiextensionsv1.WebhookConverter && c.Webhook != nil {
			conv.Webhook = &WebhookConversion{ConversionReviewVersions: c.Webhook.ConversionReviewVersions}
			if cc := c.Webhook.ClientConfig; cc != nil {
				if cc.Service != nil || cc.URL == nil {
					return nil, errors.New("a conversion webhook must be given by URL: there are no Services to route to")
				}
				conv.Webhook.ClientConfig = &WebhookClientConfig{URL: *cc.URL, CABundle: cc.CABundle}
			}
		}
		s.Spec.Conversion = conv
	} else if len(crd.Spec.Versions) > 1 {
		return nil, fmt.Errorf("CustomResourceDefinition %s has %d versions and no conversion strategy", crd.Name, len(crd.Spec.Versions))
	}
	for _, v := range crd.Spec.Versions {
		rv := APIResourceVersion{
			Name:                     v.Name,
			Served:                   v.Served,
			Storage:                  v.Storage,
			Deprecated:               v.Deprecated,
			DeprecationWarning:       v.DeprecationWarning,
			AdditionalPrinterColumns: v.AdditionalPrinterColumns,
			SelectableFields:         v.SelectableFields,
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			if err := rv.SetSchema(v.Schema.OpenAPIV3Schema); err != nil {
				return nil, fmt.Errorf("the schema of version %s: %w", v.Name, err)
			}
		}
		if v.Subresources != nil {
			rv.Subresources = *v.Subresources
		}
		s.Spec.Versions = append(s.Spec.Versions, rv)
	}
	return s, nil
}
