package customresources

import (
	"errors"
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdSchemas are the structural schemas of one CRD, by version.
type crdSchemas struct {
	groupKind schema.GroupKind
	byVersion map[string]*structuralschema.Structural
	// preserveUnknownFields is the CRD's spec.preserveUnknownFields: no
	// pruning at all.
	preserveUnknownFields bool
}

// of returns the schema of u if u is an object of this CRD, and false for
// anything else (option kinds, other kinds).
func (s *crdSchemas) of(u runtime.Unstructured) (*structuralschema.Structural, bool) {
	gvk := u.GetObjectKind().GroupVersionKind()
	if gvk.GroupKind() != s.groupKind {
		return nil, false
	}
	return s.byVersion[gvk.Version], true
}

// schemaCoercer does to Unstructured objects of a CRD what decoding into Go
// structs does to built-in objects: it drops unknown fields by the
// structural schema, drops nulls that the schema does not allow, and
// validates and normalises ObjectMeta.
type schemaCoercer struct {
	schemas *crdSchemas
	// dropInvalidMetadata drops malformed metadata fields instead of failing
	// (objects read from storage, written before metadata was validated).
	dropInvalidMetadata bool
	// repairGeneration sets a missing metadata.generation to 1.
	repairGeneration bool
	// returnUnknownFieldPaths collects the paths of dropped fields for strict
	// decoding.
	returnUnknownFieldPaths bool
}

// apply coerces u in place and returns the paths of the unknown fields it
// dropped when returnUnknownFieldPaths is set.
func (c schemaCoercer) apply(u *unstructured.Unstructured) ([]string, error) {
	kind, hasKind, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, hasAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, hasObjectMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields:     c.dropInvalidMetadata,
		ReturnUnknownFieldPaths: c.returnUnknownFieldPaths,
	})
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}

	// Option kinds (DeleteOptions for deletecollection, ...) pass here too.
	if gv.Group == c.schemas.groupKind.Group && kind == c.schemas.groupKind.Kind {
		s := c.schemas.byVersion[gv.Version]
		if !c.schemas.preserveUnknownFields {
			opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: c.returnUnknownFieldPaths}
			unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, s, true, opts)...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
		}
		fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{
			DropInvalidFields:       c.dropInvalidMetadata,
			ReturnUnknownFieldPaths: c.returnUnknownFieldPaths,
		})
		if fieldErr != nil {
			return nil, fieldErr
		}
		unknown = append(unknown, paths...)
		if c.repairGeneration && objectMeta.Generation == 0 {
			objectMeta.Generation = 1
		}
	}

	// Put back what pruning must not remove: the type and object meta.
	if hasKind {
		u.SetKind(kind)
	}
	if hasAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if hasObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// coercingDecoder decodes with a delegate, then coerces Unstructured results
// by the schema. With returnUnknownFieldPaths it reports dropped fields as a
// strict decoding error, which the endpoint handlers turn into an error or
// warnings depending on the request's fieldValidation.
type coercingDecoder struct {
	delegate runtime.Decoder
	coercer  schemaCoercer
}

var _ runtime.Decoder = coercingDecoder{}

func (d coercingDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if d.delegate == nil {
		return nil, nil, errors.New("no decoder for the media type of the data")
	}
	var strictErrs []error
	obj, gvk, err := d.delegate.Decode(data, defaults, into)
	if err != nil {
		strictErr, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, gvk, err
		}
		strictErrs = strictErr.Errors()
	}
	var unknown []string
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if unknown, err = d.coercer.apply(u); err != nil {
			return nil, gvk, err
		}
	}
	if d.coercer.returnUnknownFieldPaths && (len(strictErrs) > 0 || len(unknown) > 0) {
		for _, path := range unknown {
			strictErrs = append(strictErrs, fmt.Errorf("unknown field %q", path))
		}
		return obj, gvk, runtime.NewStrictDecodingError(strictErrs)
	}
	return obj, gvk, nil
}

// coercingConverter converts with a delegate, then coerces Unstructured
// results by the schema of their target version.
type coercingConverter struct {
	delegate runtime.ObjectConvertor
	coercer  schemaCoercer
}

var _ runtime.ObjectConvertor = coercingConverter{}

func (c coercingConverter) Convert(in, out, context interface{}) error {
	if err := c.delegate.Convert(in, out, context); err != nil {
		return err
	}
	if u, ok := out.(*unstructured.Unstructured); ok {
		if _, err := c.coercer.apply(u); err != nil {
			return err
		}
	}
	return nil
}

func (c coercingConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	out, err := c.delegate.ConvertToVersion(in, gv)
	if err != nil {
		return nil, err
	}
	if u, ok := out.(*unstructured.Unstructured); ok {
		if _, err := c.coercer.apply(u); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c coercingConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return c.delegate.ConvertFieldLabel(gvk, label, value)
}

// crDefaulter applies the defaults of the CRD's structural schema to its
// objects, and delegates everything else.
type crDefaulter struct {
	delegate runtime.ObjectDefaulter
	schemas  *crdSchemas
}

var _ runtime.ObjectDefaulter = crDefaulter{}

func (d crDefaulter) Default(in runtime.Object) {
	u, ok := in.(runtime.Unstructured)
	if !ok {
		d.delegate.Default(in)
		return
	}
	s, ours := d.schemas.of(u)
	if !ours {
		d.delegate.Default(in)
		return
	}
	structuraldefaulting.Default(u.UnstructuredContent(), s)
}
