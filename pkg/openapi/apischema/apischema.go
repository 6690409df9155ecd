// Package apischema turns the generated OpenAPI definitions of Tessera's
// types (package openapi) into APIResourceSchemas: structural OpenAPI v3
// schemas, with every $ref inlined, as apiextensions requires of a
// CustomResourceDefinition. The root workspace publishes the schemas of
// Core in the APIExports tenancy.kcp.io, topology.kcp.io and
// shards.core.kcp.io, as kcp does.
package apischema

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/openapi"
)

// Resource describes one resource to publish.
type Resource struct {
	// Model is the OpenAPI model name of the resource's type, e.g.
	// io.kcp.tenancy.v1alpha1.Workspace.
	Model string
	// Group and Version are those the resource is served under.
	Group, Version string
	// Names are the plural, singular, kind, list kind, short names and
	// categories. Singular defaults to the lower-cased kind, ListKind to
	// the kind followed by List.
	Names apiextensionsv1.CustomResourceDefinitionNames
	// Scope is Cluster or Namespaced.
	Scope apiextensionsv1.ResourceScope
	// Status tells whether the resource has a status subresource.
	Status bool
	// Scale, if set, is the resource's scale subresource.
	Scale *apiextensionsv1.CustomResourceSubresourceScale
	// PrinterColumns are the additional printer columns (optional).
	PrinterColumns []apiextensionsv1.CustomResourceColumnDefinition
	// Adjust, if set, changes the converted schema before it is stored,
	// for what openapi-gen cannot say, e.g. a pattern on list items.
	Adjust func(*apiextensionsv1.JSONSchemaProps) error
	// Annotations are set on the schema (e.g. api-approved.kubernetes.io
	// for a group of the Kubernetes project).
	Annotations map[string]string
	// definitions, if set, are the definitions the model is read from
	// (default: package openapi's).
	definitions func() map[string]common.OpenAPIDefinition
}

// Schema returns the APIResourceSchema of r, named
// <prefix>.<plural>.<group> (group "core" for the core group), where prefix
// is "v" followed by the first 8 hex digits of the SHA-256 of the JSON of
// the schema's spec: the name changes when, and only when, the spec
// changes, as APIResourceSchemas are immutable. The only version is served
// and stored.
func Schema(r Resource) (*apisv1alpha1.APIResourceSchema, error) {
	switch {
	case r.Model == "":
		return nil, errors.New("a resource needs a model")
	case r.Version == "":
		return nil, fmt.Errorf("resource of model %s: a version is required", r.Model)
	case r.Names.Plural == "" || r.Names.Kind == "":
		return nil, fmt.Errorf("resource of model %s: the plural and the kind are required", r.Model)
	case r.Scope != apiextensionsv1.ClusterScoped && r.Scope != apiextensionsv1.NamespaceScoped:
		return nil, fmt.Errorf("resource %s.%s: the scope must be Cluster or Namespaced, not %q", r.Names.Plural, r.Group, r.Scope)
	}
	defs := definitions
	if r.definitions != nil {
		defs = r.definitions
	}
	props, err := convert(defs(), r.Model)
	if err != nil {
		return nil, fmt.Errorf("resource %s.%s: %w", r.Names.Plural, r.Group, err)
	}
	if props.Type != "object" {
		return nil, fmt.Errorf("resource %s.%s: model %s is of type %q, not object", r.Names.Plural, r.Group, r.Model, props.Type)
	}
	keyDefaults(props)
	if r.Adjust != nil {
		if err := r.Adjust(props); err != nil {
			return nil, fmt.Errorf("resource %s.%s: adjusting the schema: %w", r.Names.Plural, r.Group, err)
		}
	}

	names := *r.Names.DeepCopy()
	if names.Singular == "" {
		names.Singular = strings.ToLower(names.Kind)
	}
	if names.ListKind == "" {
		names.ListKind = names.Kind + "List"
	}
	v := apisv1alpha1.APIResourceVersion{Name: r.Version, Served: true, Storage: true}
	for i := range r.PrinterColumns {
		v.AdditionalPrinterColumns = append(v.AdditionalPrinterColumns, *r.PrinterColumns[i].DeepCopy())
	}
	if r.Status {
		v.Subresources.Status = &apiextensionsv1.CustomResourceSubresourceStatus{}
	}
	v.Subresources.Scale = r.Scale.DeepCopy()
	if err := v.SetSchema(props); err != nil {
		return nil, fmt.Errorf("resource %s.%s: encoding the schema: %w", r.Names.Plural, r.Group, err)
	}
	s := &apisv1alpha1.APIResourceSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: apisv1alpha1.SchemeGroupVersion.String(), Kind: "APIResourceSchema"},
		ObjectMeta: metav1.ObjectMeta{Annotations: maps.Clone(r.Annotations)},
		Spec: apisv1alpha1.APIResourceSchemaSpec{
			Group:    r.Group,
			Names:    names,
			Scope:    r.Scope,
			Versions: []apisv1alpha1.APIResourceVersion{v},
		},
	}
	raw, err := json.Marshal(s.Spec)
	if err != nil {
		return nil, fmt.Errorf("resource %s.%s: encoding the spec: %w", r.Names.Plural, r.Group, err)
	}
	sum := sha256.Sum256(raw)
	group := r.Group
	if group == "" {
		// The core group is "core" in a schema's name, as in kcp.
		group = "core"
	}
	s.Name = "v" + hex.EncodeToString(sum[:4]) + "." + names.Plural + "." + group
	if msgs := validation.IsDNS1123Subdomain(s.Name); len(msgs) > 0 {
		return nil, fmt.Errorf("resource %s.%s: the name %q is not valid: %s", r.Names.Plural, r.Group, s.Name, strings.Join(msgs, "; "))
	}
	return s, nil
}

// JSONSchemaProps returns the structural schema of the OpenAPI model
// model, with every $ref inlined. metadata (an ObjectMeta) is just
// {type: object} at the root, and an object that keeps all of its fields
// deeper (a pod template's labels); Time and MicroTime are date-time
// strings; IntOrString and Quantity are int-or-string; RawExtension is an
// object that preserves unknown fields, apiextensions' JSON any value that
// does. Descriptions, enums, non-zero defaults, required fields and the
// list and map extensions are kept. A model that refers to itself,
// directly or not, is an error.
func JSONSchemaProps(model string) (*apiextensionsv1.JSONSchemaProps, error) {
	return convert(definitions(), model)
}

// definitions are the generated definitions, with refs that are bare model
// names.
var definitions = sync.OnceValue(func() map[string]common.OpenAPIDefinition {
	return openapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef(name)
	})
})

// convert returns the structural schema of model in defs.
func convert(defs map[string]common.OpenAPIDefinition, model string) (*apiextensionsv1.JSONSchemaProps, error) {
	c := &converter{defs: defs}
	return c.model(model)
}

type converter struct {
	defs map[string]common.OpenAPIDefinition
	// stack are the models being converted, outermost first.
	stack []string
	// path is the field path within the outermost model, for errors.
	path []string
}

// Models that have a fixed schema of their own in a CRD.
var (
	objectMetaModel  = metav1.ObjectMeta{}.OpenAPIModelName()
	timeModel        = metav1.Time{}.OpenAPIModelName()
	microTimeModel   = metav1.MicroTime{}.OpenAPIModelName()
	intOrStringModel = intstr.IntOrString{}.OpenAPIModelName()
	quantityModel    = resource.Quantity{}.OpenAPIModelName()
	rawExtModel      = runtime.RawExtension{}.OpenAPIModelName()
	jsonModel        = apiextensionsv1.JSON{}.OpenAPIModelName()
)

// special returns the fixed schema of model, without a description, or nil.
func special(model string) *apiextensionsv1.JSONSchemaProps {
	switch model {
	case objectMetaModel:
		return &apiextensionsv1.JSONSchemaProps{Type: "object"}
	case timeModel, microTimeModel:
		return &apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time"}
	case intOrStringModel, quantityModel:
		return &apiextensionsv1.JSONSchemaProps{
			AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
			XIntOrString: true,
		}
	case rawExtModel:
		return &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}
	case jsonModel:
		return &apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTo(true)}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

func (c *converter) errorf(format string, args ...any) error {
	at := c.stack[0]
	if len(c.path) > 0 {
		at += " " + strings.Join(c.path, "")
	}
	return fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...))
}

// model converts the definition of model.
func (c *converter) model(model string) (*apiextensionsv1.JSONSchemaProps, error) {
	if s := special(model); s != nil {
		return s, nil
	}
	for i, m := range c.stack {
		if m == model {
			cycle := append(append([]string{}, c.stack[i:]...), model)
			return nil, c.errorf("model %s refers to itself (%s): a structural schema cannot be recursive", model, strings.Join(cycle, " -> "))
		}
	}
	def, ok := c.defs[model]
	if !ok {
		if len(c.stack) == 0 {
			return nil, fmt.Errorf("there is no OpenAPI definition of model %q", model)
		}
		return nil, c.errorf("there is no OpenAPI definition of model %q", model)
	}
	c.stack = append(c.stack, model)
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()
	return c.schema(&def.Schema)
}

// ref returns the model s refers to: its $ref, or that of the single
// member of an allOf that wraps a $ref to give it a description or a
// default.
func ref(s *spec.Schema) string {
	if r := s.Ref.String(); r != "" {
		return r
	}
	if len(s.AllOf) == 1 && s.AllOf[0].Ref.String() != "" && len(s.Type) == 0 && len(s.Properties) == 0 {
		return s.AllOf[0].Ref.String()
	}
	return ""
}

// schema converts s.
func (c *converter) schema(s *spec.Schema) (*apiextensionsv1.JSONSchemaProps, error) {
	if model := ref(s); model != "" {
		return c.reference(s, model)
	}

	out := &apiextensionsv1.JSONSchemaProps{
		Description:   s.Description,
		Title:         s.Title,
		Format:        s.Format,
		Pattern:       s.Pattern,
		Maximum:       s.Maximum,
		Minimum:       s.Minimum,
		MaxLength:     s.MaxLength,
		MinLength:     s.MinLength,
		MaxItems:      s.MaxItems,
		MinItems:      s.MinItems,
		MaxProperties: s.MaxProperties,
		MinProperties: s.MinProperties,
		MultipleOf:    s.MultipleOf,
		Nullable:      s.Nullable,
	}
	out.ExclusiveMaximum = s.ExclusiveMaximum
	out.ExclusiveMinimum = s.ExclusiveMinimum
	if len(s.Required) > 0 {
		out.Required = append([]string(nil), s.Required...)
	}

	switch len(s.Type) {
	case 0:
	case 1:
		out.Type = s.Type[0]
	default:
		return nil, c.errorf("has several types %v; a structural schema has one", []string(s.Type))
	}
	switch {
	case s.UniqueItems:
		return nil, c.errorf("uniqueItems cannot be true in a CustomResourceDefinition")
	case len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Not != nil:
		return nil, c.errorf("allOf, anyOf, oneOf and not are not converted")
	case len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 || s.AdditionalItems != nil || len(s.Definitions) > 0:
		return nil, c.errorf("patternProperties, dependencies, additionalItems and definitions are not allowed in a structural schema")
	}

	for _, e := range s.Enum {
		raw, err := json.Marshal(e)
		if err != nil {
			return nil, c.errorf("enum value %v: %v", e, err)
		}
		out.Enum = append(out.Enum, apiextensionsv1.JSON{Raw: raw})
	}

	if len(s.Properties) > 0 {
		out.Properties = make(map[string]apiextensionsv1.JSONSchemaProps, len(s.Properties))
		// In order, for the same error on each call.
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			prop := s.Properties[name]
			c.path = append(c.path, "."+name)
			p, err := c.schema(&prop)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			out.Properties[name] = *p
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		switch {
		case ap.Schema != nil:
			c.path = append(c.path, "[*]")
			p, err := c.schema(ap.Schema)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			out.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: p}
		case ap.Allows:
			// Any value: a structural schema says so by preserving
			// unknown fields.
			out.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{
				Allows: true,
				Schema: &apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTo(true)},
			}
		default:
			return nil, c.errorf("additionalProperties: false is not allowed in a structural schema")
		}
	}
	if it := s.Items; it != nil {
		if it.Schema == nil {
			return nil, c.errorf("tuple items are not allowed in a structural schema")
		}
		c.path = append(c.path, "[]")
		p, err := c.schema(it.Schema)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, err
		}
		out.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: p}
	}

	if err := c.extensions(s.Extensions, out); err != nil {
		return nil, err
	}
	if err := c.setDefault(s.Default, out); err != nil {
		return nil, err
	}
	if out.Type == "" && !out.XIntOrString && (out.XPreserveUnknownFields == nil || !*out.XPreserveUnknownFields) {
		return nil, c.errorf("has no type")
	}
	return out, nil
}

// reference converts s, a $ref to model, possibly with a description, a
// default or extensions of its own that apply on top of the model's.
func (c *converter) reference(s *spec.Schema, model string) (*apiextensionsv1.JSONSchemaProps, error) {
	out, err := c.model(model)
	if err != nil {
		return nil, err
	}
	if model == objectMetaModel {
		// At the root only {type: object}: the API server validates
		// metadata itself, and a root metadata schema must not say
		// anything else. Deeper (a Deployment's pod template) the
		// metadata is kept whole, labels and annotations included,
		// instead of pruned to nothing.
		if len(c.path) != 1 {
			out.XPreserveUnknownFields = ptr.To(true)
		}
		return out, nil
	}
	if s.Description != "" {
		out.Description = s.Description
	}
	if s.Nullable {
		out.Nullable = true
	}
	if err := c.extensions(s.Extensions, out); err != nil {
		return nil, err
	}
	if s.Default != nil {
		out.Default = nil
		if err := c.setDefault(s.Default, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// extensions sets the extensions of a structural schema that ext has;
// others (patch strategies, unions, group-version-kinds) are dropped.
func (c *converter) extensions(ext spec.Extensions, out *apiextensionsv1.JSONSchemaProps) error {
	for k, v := range ext {
		var err error
		switch strings.ToLower(k) {
		case "x-kubernetes-list-type":
			var s string
			if err = remarshal(v, &s); err == nil {
				out.XListType = &s
			}
		case "x-kubernetes-list-map-keys":
			err = remarshal(v, &out.XListMapKeys)
		case "x-kubernetes-map-type":
			var s string
			if err = remarshal(v, &s); err == nil {
				out.XMapType = &s
			}
		case "x-kubernetes-preserve-unknown-fields":
			var b bool
			if err = remarshal(v, &b); err == nil && b {
				out.XPreserveUnknownFields = &b
			}
		case "x-kubernetes-int-or-string":
			err = remarshal(v, &out.XIntOrString)
		case "x-kubernetes-embedded-resource":
			err = remarshal(v, &out.XEmbeddedResource)
		case "x-kubernetes-validations":
			err = remarshal(v, &out.XValidations)
		}
		if err != nil {
			return c.errorf("extension %s: %v", k, err)
		}
	}
	return nil
}

// keyDefaults gives the keys of every map-typed list (x-kubernetes-list-
// map-keys) that is neither required nor defaulted the zero value of its
// type as default, as a CustomResourceDefinition must have them. They are
// the zero defaults openapi-gen gives such fields of the Kubernetes types
// (e.g. the name of a pod's imagePullSecrets), which setDefault drops.
func keyDefaults(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	for k, p := range s.Properties {
		keyDefaults(&p)
		s.Properties[k] = p
	}
	if s.AdditionalProperties != nil {
		keyDefaults(s.AdditionalProperties.Schema)
	}
	if s.Items == nil || s.Items.Schema == nil {
		return
	}
	item := s.Items.Schema
	keyDefaults(item)
	if s.XListType == nil || *s.XListType != "map" {
		return
	}
	for _, key := range s.XListMapKeys {
		p, ok := item.Properties[key]
		if !ok || p.Default != nil || slices.Contains(item.Required, key) {
			continue
		}
		var zero string
		switch p.Type {
		case "string":
			zero = `""`
		case "integer", "number":
			zero = "0"
		case "boolean":
			zero = "false"
		default:
			continue
		}
		p.Default = &apiextensionsv1.JSON{Raw: []byte(zero)}
		item.Properties[key] = p
	}
}

func remarshal(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// setDefault sets the default d on out. openapi-gen gives every field that
// is not a pointer the zero value of its Go type as default; those are
// dropped, as they would defeat required (a default "" for a required
// string), except {} for an object without required fields, the default
// kcp gives its specs and statuses. Other defaults are kept.
func (c *converter) setDefault(d any, out *apiextensionsv1.JSONSchemaProps) error {
	if d == nil {
		return nil
	}
	if zero(d) {
		if m, ok := d.(map[string]any); !ok || m == nil || out.Type != "object" || len(out.Required) > 0 {
			return nil
		}
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return c.errorf("default %v: %v", d, err)
	}
	out.Default = &apiextensionsv1.JSON{Raw: raw}
	return nil
}

// zero tells whether d is the zero value of a JSON type: "", 0, false, {}
// or [].
func zero(d any) bool {
	v := reflect.ValueOf(d)
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	default:
		return v.IsZero()
	}
}
