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

// CRDFromSchema returns the CustomResourceDefinition named
// <plural>.<group> that defines what s defines, defaulted as the API server
// defaults CRDs, with status.acceptedNames set to its names and
// status.storedVersions to its storage version. group replaces the
// schema's group (validation uses a placeholder for groups a CRD may not
// have); pass s.Spec.Group to keep it. It fails if a version's schema is
// not an OpenAPI v3 schema, naming the version.
func CRDFromSchema(s *APIResourceSchema, group string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: s.Spec.Names,
			Scope: s.Spec.Scope,
		},
	}
	crd.Name = s.Spec.Names.Plural + "." + group
	if c := s.Spec.Conversion; c != nil {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.ConversionStrategyType(c.Strategy)}
	}
	for i, v := range s.Spec.Versions {
		cv := apiextensionsv1.CustomResourceDefinitionVersion{
			Name:                     v.Name,
			Served:                   v.Served,
			Storage:                  v.Storage,
			Deprecated:               v.Deprecated,
			DeprecationWarning:       v.DeprecationWarning,
			AdditionalPrinterColumns: v.AdditionalPrinterColumns,
			SelectableFields:         v.SelectableFields,
		}
		if v.Subresources.Status != nil || v.Subresources.Scale != nil {
			sub := v.Subresources
			cv.Subresources = &sub
		}
		schema, err := s.Spec.Versions[i].GetSchema()
		if err != nil {
			return nil, &VersionSchemaError{Index: i, Version: v.Name, Err: err}
		}
		if schema != nil {
			cv.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema}
		}
		crd.Spec.Versions = append(crd.Spec.Versions, cv)
		if v.Storage {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		}
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	crd.Status.AcceptedNames = crd.Spec.Names
	return crd, nil
}

// VersionSchemaError is a version whose schema is not an OpenAPI v3 schema.
//
// +k8s:openapi-gen=false
// +k8s:deepcopy-gen=false
type VersionSchemaError struct {
	Index   int
	Version string
	Err     error
}

func (e *VersionSchemaError) Error() string {
	return fmt.Sprintf("the schema of version %s is not an OpenAPI v3 schema: %v", e.Version, e.Err)
}

func (e *VersionSchemaError) Unwrap() error { return e.Err }
