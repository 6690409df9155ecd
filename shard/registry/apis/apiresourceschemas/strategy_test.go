package apiresourceschemas

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

// cowboys is the seed's schema: v220920-6039d110.cowboys.wildwest.dev.
func cowboys(change ...func(*apisv1alpha1.APIResourceSchema)) *apisv1alpha1.APIResourceSchema {
	s := &apisv1alpha1.APIResourceSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "v220920-6039d110.cowboys.wildwest.dev"},
		Spec: apisv1alpha1.APIResourceSchemaSpec{
			Group: "wildwest.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "cowboys", Singular: "cowboy", Kind: "Cowboy", ListKind: "CowboyList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apisv1alpha1.APIResourceVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema:       runtime.RawExtension{Raw: []byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"intent":{"type":"string","default":"ride"}}},"status":{"type":"object","properties":{"result":{"type":"string"}}}}}`)},
				Subresources: apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Intent", Type: "string", JSONPath: ".spec.intent"},
				},
			}},
		},
	}
	for _, c := range change {
		c(s)
	}
	return s
}

// fields returns "<type> <field>" of each error.
func fields(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema *apisv1alpha1.APIResourceSchema
		want   []string // "<type> <field>"; none for a valid schema
		detail string
	}{
		{name: "the seed's schema", schema: cowboys()},
		{name: "core group", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			s.Name, s.Spec.Group = "v1.cowboys.core", ""
		})},
		{name: "a single-segment group of Kubernetes", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			s.Name, s.Spec.Group = "v1.cowboys.apps", "apps"
		})},
		{name: "name without the plural and group", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) { s.Name = "cowboys.wildwest.dev" }),
			want: []string{"FieldValueInvalid metadata.name"}, detail: "must end in .cowboys.wildwest.dev"},
		{name: "name with a bad prefix", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) { s.Name = "V1.cowboys.wildwest.dev" }),
			want: []string{"FieldValueInvalid metadata.name", "FieldValueInvalid metadata.name"}, detail: "in front of .cowboys.wildwest.dev"},
		{name: "the core group spelt core", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) { s.Name, s.Spec.Group = "v1.cowboys.core", "core" }),
			want: []string{"FieldValueInvalid spec.group"}},
		{name: "a group without a dot", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) { s.Name, s.Spec.Group = "v1.cowboys.wildwest", "wildwest" }),
			want: []string{"FieldValueInvalid spec.group"}, detail: "at least one dot"},
		{name: "no schema", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) { s.Spec.Versions[0].Schema.Raw = nil }),
			want: []string{"FieldValueRequired spec.versions[0].schema"}},
		{name: "a schema that is not structural", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			s.Spec.Versions[0].Schema.Raw = []byte(`{"type":"object","properties":{"spec":{}}}`)
		}), want: []string{"FieldValueRequired spec.versions[0].schema.properties[spec].type"}},
		{name: "a schema that is not JSON schema", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			s.Spec.Versions[0].Schema.Raw = []byte(`[1]`)
		}), want: []string{"FieldValueInvalid spec.versions[0].schema"}},
		{name: "two storage versions", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			v := s.Spec.Versions[0]
			v.Name = "v1"
			s.Spec.Versions = append(s.Spec.Versions, v)
		}), want: []string{"FieldValueInvalid spec.versions"}, detail: "exactly one"},
		{name: "a bad printer column", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			s.Spec.Versions[0].AdditionalPrinterColumns[0].Type = "colour"
		}), want: []string{"FieldValueInvalid spec.versions[0].additionalPrinterColumns[0].type"}},
		{name: "a conversion webhook", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			s.Spec.Conversion = &apisv1alpha1.CustomResourceConversion{Strategy: apisv1alpha1.WebhookConverter}
		}), want: []string{"FieldValueInvalid spec.conversion.strategy"}, detail: "no conversion webhooks"},
		{name: "path segment names", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) { s.Spec.NameValidation = "PathSegment" }),
			want: []string{"FieldValueInvalid spec.nameValidation"}},
		{name: "a protected group without approval", schema: cowboys(func(s *apisv1alpha1.APIResourceSchema) {
			s.Name, s.Spec.Group = "v1.cowboys.wild.k8s.io", "wild.k8s.io"
		}), want: []string{"FieldValueRequired metadata.annotations[api-approved.kubernetes.io]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validate(tc.schema)
			got := fields(errs)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("errors %v (%v), want %v", got, errs, tc.want)
			}
			if tc.detail != "" && !strings.Contains(errs.ToAggregate().Error(), tc.detail) {
				t.Errorf("errors %v do not say %q", errs, tc.detail)
			}
		})
	}
}

func TestSchemasAreImmutable(t *testing.T) {
	old := cowboys(func(s *apisv1alpha1.APIResourceSchema) { s.ResourceVersion = "1" })
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"team": "west"}
	if errs := validateUpdate(labelled, old); len(errs) > 0 {
		t.Errorf("adding a label: %v", errs)
	}
	changed := old.DeepCopy()
	changed.Spec.Versions[0].Served = false
	errs := validateUpdate(changed, old)
	if got := fields(errs); strings.Join(got, ",") != "FieldValueForbidden spec" || !strings.Contains(errs.ToAggregate().Error(), "immutable") {
		t.Errorf("changing the spec: %v, want Forbidden spec: immutable", errs)
	}
}

// TestSnapshotsOfCRDsAreValid: what kubectl kcp crd snapshot makes of a
// CRD Kubernetes accepts is an APIResourceSchema the shard accepts.
func TestSnapshotsOfCRDsAreValid(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboys.wildwest.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "wildwest.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "cowboys", Singular: "cowboy", Kind: "Cowboy", ListKind: "CowboyList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": {Type: "string"}}}},
				}},
				Subresources:     &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}},
			}},
		},
	}
	s, err := apisv1alpha1.SchemaFromCRD(crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "v1.cowboys.wildwest.dev" {
		t.Errorf("name %s", s.Name)
	}
	if errs := validate(s); len(errs) > 0 {
		t.Errorf("the snapshot of a valid CRD is refused: %v", errs)
	}
}

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		detail string // part of the error; none for a valid name
	}{
		{name: "v220920-6039d110.cowboys.wildwest.dev"},
		{name: "v1.configmaps.core"},
		{name: "v1.deployments.apps"},
		{name: "today.cowboys.wild.west.dev"},
		{name: "cowboys.wildwest", detail: "<prefix>.<plural>.<group>"},
		{name: "v1.cowboys", detail: "<prefix>.<plural>.<group>"},
		{name: "V1.cowboys.wildwest.dev", detail: "lowercase"},
		{name: "v1-.cowboys.wildwest.dev", detail: "lowercase"},
		{name: "1v.cowboys.wildwest.dev", detail: `the prefix "1v"`},
		{name: "v1.1cowboys.wildwest.dev", detail: `the plural "1cowboys"`},
		{name: "v1.cowboys.wildwest", detail: "at least one dot"},
		{name: "v1.cowboys." + strings.Repeat("a", 250) + ".dev", detail: "253"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateName(tc.name, field.NewPath("spec", "latestResourceSchemas").Index(0))
			if tc.detail == "" {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if got := fields(errs); strings.Join(got, ",") != "FieldValueInvalid spec.latestResourceSchemas[0]" {
				t.Fatalf("errors %v (%v), want one invalid value", got, errs)
			}
			if !strings.Contains(errs.ToAggregate().Error(), tc.detail) {
				t.Errorf("errors %v do not say %q", errs, tc.detail)
			}
		})
	}
}

func TestSplitName(t *testing.T) {
	for name, want := range map[string][3]string{
		"v1.cowboys.wildwest.dev": {"v1", "cowboys", "wildwest.dev"},
		"v1.configmaps.core":      {"v1", "configmaps", ""},
		"v1.deployments.apps":     {"v1", "deployments", "apps"},
	} {
		prefix, plural, group, ok := SplitName(name)
		if !ok || [3]string{prefix, plural, group} != want {
			t.Errorf("%s: %q %q %q %v, want %q", name, prefix, plural, group, ok, want)
		}
	}
	if _, _, _, ok := SplitName("cowboys.dev"); ok {
		t.Error("cowboys.dev split in three")
	}
}
