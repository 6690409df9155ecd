// Package apiresourceschemas serves apis.kcp.io/v1alpha1
// APIResourceSchemas: immutable, CRD-like definitions of one resource,
// named <prefix>.<plural>.<group>, that APIExports publish.
//
// A schema is validated as Kubernetes validates the CustomResourceDefinition
// it stands for (apiextensions' own validation of a CRD made of it:
// structural schemas, defaults, CEL rules, printer columns, subresources,
// selectable fields), with kcp's rules on top: the name, the core group "",
// and no change of the spec after creation. What Tessera cannot serve is
// refused: conversion webhooks and the PathSegment name validation.
package apiresourceschemas

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// strategy is the create, update and delete strategy of schemas.
type strategy struct {
	store.Strategy[*apisv1alpha1.APIResourceSchema]
}

// prefixRE is what comes before .<plural>.<group> in a schema's name, as
// in kcp.
var prefixRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// singleSegmentGroups are the groups of one segment Kubernetes has, which
// kcp allows as schema groups.
var singleSegmentGroups = sets.New("apps", "batch", "extensions", "policy", "autoscaling")

// placeholderGroup stands in for the core group and the single-segment
// groups when the CRD validation checks the rest of a schema: a CRD's group
// must have a dot.
const placeholderGroup = "schema.apis.kcp.io"

// validate validates a new schema.
func validate(s *apisv1alpha1.APIResourceSchema) field.ErrorList {
	errs := validation.ValidateObjectMeta(&s.ObjectMeta, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateName(s.Name, &s.Spec)...)
	return append(errs, validateSpec(s)...)
}

// validateUpdate refuses any change of the spec: schemas are immutable,
// a provider publishes a new one.
func validateUpdate(s, old *apisv1alpha1.APIResourceSchema) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if !equality.Semantic.DeepEqual(s.Spec, old.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "an APIResourceSchema is immutable: create a new one (with another name prefix) and point the APIExport at it"))
	}
	return errs
}

// validateName checks the name is <prefix>.<plural>.<group> ("core" for
// the core group).
func validateName(name string, spec *apisv1alpha1.APIResourceSchemaSpec) field.ErrorList {
	if spec.Names.Plural == "" {
		return nil // spec.names.plural is reported as required
	}
	group := spec.Group
	if group == "" {
		group = "core"
	}
	suffix := "." + spec.Names.Plural + "." + group
	p := field.NewPath("metadata", "name")
	prefix, ok := strings.CutSuffix(name, suffix)
	if !ok {
		return field.ErrorList{field.Invalid(p, name, "must end in "+suffix)}
	}
	if !prefixRE.MatchString(prefix) {
		return field.ErrorList{field.Invalid(p, name, fmt.Sprintf("must match %s in front of %s", prefixRE, suffix))}
	}
	return nil
}

// invalidGroup says why group, not the core group, cannot be the group of
// a schema, or returns "": it must be a DNS subdomain with a dot, or one of
// Kubernetes' single-segment groups.
func invalidGroup(group string) string {
	if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
		return strings.Join(msgs, ", ")
	}
	if !strings.Contains(group, ".") && !singleSegmentGroups.Has(group) {
		return "should be a domain with at least one dot"
	}
	return ""
}

// SplitName splits the name of a schema, <prefix>.<plural>.<group>, at its
// first two dots; the group of "core" is the core group "". ok is false
// when the name has fewer than three parts. The parts are not validated.
func SplitName(name string) (prefix, plural, group string, ok bool) {
	parts := strings.SplitN(name, ".", 3)
	if len(parts) < 3 {
		return "", "", "", false
	}
	group = parts[2]
	if group == "core" {
		group = ""
	}
	return parts[0], parts[1], group, true
}

// ValidateName validates name as the name of a schema on its own, where
// only the name is at hand (the schemas an APIExport lists):
// <prefix>.<plural>.<group>, a DNS subdomain whose prefix is as in a
// schema's name, whose plural is a DNS-1035 label as a CRD's, and whose
// group is "core" or a group a schema may have.
func ValidateName(name string, p *field.Path) field.ErrorList {
	if msgs := utilvalidation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, strings.Join(msgs, ", "))}
	}
	prefix, plural, group, ok := SplitName(name)
	var msgs []string
	if !ok {
		msgs = append(msgs, "must be <prefix>.<plural>.<group>, with the group core for the core group")
	} else {
		if !prefixRE.MatchString(prefix) {
			msgs = append(msgs, fmt.Sprintf("the prefix %q must match %s", prefix, prefixRE))
		}
		for _, m := range utilvalidation.IsDNS1035Label(plural) {
			msgs = append(msgs, fmt.Sprintf("the plural %q: %s", plural, m))
		}
		if group != "" {
			if m := invalidGroup(group); m != "" {
				msgs = append(msgs, fmt.Sprintf("the group %q: %s", group, m))
			}
		}
	}
	if len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, strings.Join(msgs, "; "))}
	}
	return nil
}

// validateSpec validates the group as kcp does, and everything else as
// Kubernetes validates the CRD the schema stands for.
func validateSpec(s *apisv1alpha1.APIResourceSchema) field.ErrorList {
	spec := &s.Spec
	p := field.NewPath("spec")
	var errs field.ErrorList
	crdGroup := spec.Group
	switch {
	case spec.Group == "":
		crdGroup = placeholderGroup
	case spec.Group == "core":
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, `the core group is ""`))
	case invalidGroup(spec.Group) != "":
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, invalidGroup(spec.Group)))
	case !strings.Contains(spec.Group, "."):
		crdGroup = placeholderGroup
	}
	switch spec.NameValidation {
	case "", "DNS1123Subdomain":
	case "PathSegment":
		errs = append(errs, field.Invalid(p.Child("nameValidation"), spec.NameValidation, "Tessera validates the names of custom resources as DNS subdomains only (DNS1123Subdomain)"))
	default:
		errs = append(errs, field.NotSupported(p.Child("nameValidation"), spec.NameValidation, []string{"DNS1123Subdomain"}))
	}
	if c := spec.Conversion; c != nil && c.Strategy != apisv1alpha1.NoneConverter {
		errs = append(errs, field.Invalid(p.Child("conversion", "strategy"), c.Strategy, "Tessera serves no conversion webhooks: only None (objects change only their apiVersion between versions)"))
	}

	crd, schemaErrs := asCRD(s, crdGroup)
	errs = append(errs, schemaErrs...)
	if crd == nil {
		return errs
	}
	for _, e := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), crd) {
		switch {
		case strings.HasPrefix(e.Field, "metadata.name"), strings.HasPrefix(e.Field, "status"):
			// The name is the schema's own; the status is made up.
			continue
		case strings.HasPrefix(e.Field, "spec.group"):
			continue // checked above, as kcp does
		case strings.HasPrefix(e.Field, "spec.conversion"):
			continue // refused above
		}
		e.Field = schemaPath(e.Field)
		errs = append(errs, e)
	}
	return errs
}

// schemaPath turns the path of a field of the CRD into the schema's:
// spec.versions[i].schema.openAPIV3Schema becomes spec.versions[i].schema.
// What every version shares, the conversion to the internal CRD moved to
// the top of its spec (spec.validation, spec.subresources, ...); it is
// reported on the first version, which has it as all others do.
func schemaPath(path string) string {
	for crd, schema := range map[string]string{
		"spec.validation.openAPIV3Schema": "spec.versions[0].schema",
		"spec.subresources":               "spec.versions[0].subresources",
		"spec.additionalPrinterColumns":   "spec.versions[0].additionalPrinterColumns",
		"spec.selectableFields":           "spec.versions[0].selectableFields",
	} {
		if rest, ok := strings.CutPrefix(path, crd); ok {
			return schema + rest
		}
	}
	return strings.Replace(path, ".schema.openAPIV3Schema", ".schema", 1)
}

// asCRD returns the (internal) CRD a schema stands for, defaulted as the
// API server defaults CRDs, or the errors of versions whose schema is not
// an OpenAPI v3 schema.
func asCRD(s *apisv1alpha1.APIResourceSchema, group string) (*apiextensionsinternal.CustomResourceDefinition, field.ErrorList) {
	crd, err := apisv1alpha1.CRDFromSchema(s, group)
	if err != nil {
		var vErr *apisv1alpha1.VersionSchemaError
		if errors.As(err, &vErr) {
			return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "versions").Index(vErr.Index).Child("schema"), string(s.Spec.Versions[vErr.Index].Schema.Raw), "not an OpenAPI v3 schema: "+vErr.Err.Error())}
		}
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	crd.Annotations = s.Annotations
	out := &apiextensionsinternal.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	return out, nil
}
