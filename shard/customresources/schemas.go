package customresources

import (
	"fmt"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// structuralSchemas converts the schema of every version of crd into a
// structural schema with defaults pruned, as the apiextensions validation
// guarantees for stored CRDs.
func structuralSchemas(crd *apiextensionsv1.CustomResourceDefinition) (*crdSchemas, error) {
	out := &crdSchemas{
		groupKind:             schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Status.AcceptedNames.Kind},
		byVersion:             map[string]*structuralschema.Structural{},
		preserveUnknownFields: crd.Spec.PreserveUnknownFields,
	}
	for _, v := range crd.Spec.Versions {
		internal, err := internalValidation(crd, v.Name)
		if err != nil {
			return nil, err
		}
		if internal == nil {
			continue
		}
		s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			if !crd.Spec.PreserveUnknownFields {
				return nil, fmt.Errorf("the schema of version %s is not structural: %w", v.Name, err)
			}
		} else if !crd.Spec.PreserveUnknownFields {
			// The structural schema shares defaults with the CRD object.
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("pruning the defaults of version %s: %w", v.Name, err)
			}
		}
		out.byVersion[v.Name] = s
	}
	return out, nil
}

// internalValidation returns the schema of a version in the internal
// apiextensions types, or nil when the version has none.
func internalValidation(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensionsinternal.CustomResourceValidation, error) {
	v1, err := apiextensionshelpers.GetSchemaForVersion(crd, version)
	if err != nil {
		return nil, fmt.Errorf("reading the schema of version %s: %w", version, err)
	}
	if v1 == nil {
		return nil, nil
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v1, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema of version %s: %w", version, err)
	}
	return internal, nil
}

// typeConverter returns the type converter server-side apply uses for crd,
// built from the OpenAPI v3 of all its versions. When the OpenAPI cannot be
// built, it falls back to a converter that deduces types from the objects,
// as upstream does.
func typeConverter(logger klog.Logger, crd *apiextensionsv1.CustomResourceDefinition) (managedfields.TypeConverter, error) {
	models, err := openAPIModels(crd)
	if err != nil {
		logger.Error(err, "Falling back to deduced types for server-side apply", "crd", crd.Name)
		return managedfields.NewDeducedTypeConverter(), nil
	}
	tc, err := managedfields.NewTypeConverter(models, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("building the type converter: %w", err)
	}
	return tc, nil
}

// openAPIModels returns the OpenAPI v3 schemas of every version of crd,
// with the ObjectMeta and ListMeta definitions they refer to.
func openAPIModels(crd *apiextensionsv1.CustomResourceDefinition) (map[string]*spec.Schema, error) {
	specs := make([]*spec3.OpenAPI, 0, len(crd.Spec.Versions))
	for _, v := range crd.Spec.Versions {
		s, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
		if err != nil {
			return nil, fmt.Errorf("building the OpenAPI of version %s: %w", v.Name, err)
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		return nil, fmt.Errorf("merging the OpenAPI of all versions: %w", err)
	}
	if merged.Components == nil || len(merged.Components.Schemas) == 0 {
		return nil, fmt.Errorf("the OpenAPI of %s has no schemas", crd.Name)
	}
	return merged.Components.Schemas, nil
}

// replicasPaths maps every version of crd to the field path of its scale
// subresource's spec replicas (nil without a scale subresource), for the
// field manager of the scale subresource.
func replicasPaths(crd *apiextensionsv1.CustomResourceDefinition) (managedfields.ResourcePathMappings, error) {
	out := managedfields.ResourcePathMappings{}
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		sub, err := apiextensionshelpers.GetSubresourcesForVersion(crd, v.Name)
		if err != nil {
			return nil, fmt.Errorf("reading the subresources of version %s: %w", v.Name, err)
		}
		if sub == nil || sub.Scale == nil {
			out[gv] = nil
			continue
		}
		var path fieldpath.Path
		for _, name := range strings.Split(strings.TrimPrefix(sub.Scale.SpecReplicasPath, "."), ".") {
			path = append(path, fieldpath.PathElement{FieldName: &name})
		}
		out[gv] = path
	}
	return out, nil
}

// printerColumns returns the additionalPrinterColumns of a version, or just
// Age when it has none.
func printerColumns(v *apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceColumnDefinition {
	if len(v.AdditionalPrinterColumns) > 0 {
		return v.AdditionalPrinterColumns
	}
	return []apiextensionsv1.CustomResourceColumnDefinition{ageColumn()}
}

// scaleColumns returns the columns of the scale subresource's table.
func scaleColumns(scale *apiextensionsv1.CustomResourceSubresourceScale) []apiextensionsv1.CustomResourceColumnDefinition {
	var cols []apiextensionsv1.CustomResourceColumnDefinition
	if scale != nil {
		if scale.SpecReplicasPath != "" {
			cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{
				Name: "Desired", Type: "integer", Description: "Number of desired replicas", JSONPath: ".spec.replicas",
			})
		}
		if scale.StatusReplicasPath != "" {
			cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{
				Name: "Available", Type: "integer", Description: "Number of actual replicas", JSONPath: ".status.replicas",
			})
		}
	}
	return append(cols, ageColumn())
}

func ageColumn() apiextensionsv1.CustomResourceColumnDefinition {
	return apiextensionsv1.CustomResourceColumnDefinition{
		Name: "Age", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], JSONPath: ".metadata.creationTimestamp",
	}
}

// TypeConverter returns the type converter server-side apply uses for crd,
// for the mutating admission policies that apply configurations to its
// objects.
func TypeConverter(logger klog.Logger, crd *apiextensionsv1.CustomResourceDefinition) (managedfields.TypeConverter, error) {
	return typeConverter(logger, crd)
}
