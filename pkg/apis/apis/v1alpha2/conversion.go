package v1alpha2

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

// The annotations that keep, on an object of one version, what only the
// other version can express. They are kcp's keys: an object converted by
// kcp and by a shard carries the same ones. The keys under
// "v1alpha2" are stored (v1alpha1 is the storage version); those naming
// v1alpha1 appear only on objects read as v1alpha2 and are consumed when
// such an object is written back.
const (
	// ResourceSchemasAnnotation keeps, on a v1alpha1 APIExport, the
	// resources of v1alpha2 that latestResourceSchemas cannot express: a
	// storage other than crd, or a name and group that are not those of
	// the schema's name.
	ResourceSchemasAnnotation = "apis.v1alpha2.kcp.io/resource-schemas"
	// PermissionClaimsAnnotation keeps, on a v1alpha1 APIExport, the
	// v1alpha2 claims whose verbs are not ["*"].
	PermissionClaimsAnnotation = "apis.v1alpha2.kcp.io/permission-claims"
	// PermissionClaimsV1Alpha1Annotation keeps, on a v1alpha2 APIExport or
	// APIBinding, the v1alpha1 claims of the spec that v1alpha2 cannot
	// express (a resourceSelector, or all unset).
	PermissionClaimsV1Alpha1Annotation = "apis.v1alpha2.kcp.io/v1alpha1-permission-claims"

	// AcceptablePermissionClaimsAnnotation keeps, on a v1alpha1
	// APIBinding, the v1alpha2 answers whose verbs are not ["*"] or whose
	// selector is not matchAll.
	AcceptablePermissionClaimsAnnotation = "apis.v1alpha2.kcp.io/acceptable-permission-claims"
	// StatusPermissionClaimsAnnotation keeps, on a v1alpha1 APIBinding,
	// the v1alpha2 status.exportPermissionClaims whose verbs are not
	// ["*"].
	StatusPermissionClaimsAnnotation = "apis.v1alpha2.kcp.io/status-export-permission-claims"
	// StatusAppliedClaimsAnnotation keeps, on a v1alpha1 APIBinding, the
	// v1alpha2 status.appliedPermissionClaims whose verbs are not ["*"]
	// or whose selector is not matchAll.
	StatusAppliedClaimsAnnotation = "apis.v1alpha2.kcp.io/status-applied-permission-claims"
	// StatusPermissionClaimsV1Alpha1Annotation keeps, on a v1alpha2
	// APIBinding, the v1alpha1 status.exportPermissionClaims v1alpha2
	// cannot express.
	StatusPermissionClaimsV1Alpha1Annotation = "apis.v1alpha2.kcp.io/v1alpha1-status-export-permission-claims"
	// StatusAppliedClaimsV1Alpha1Annotation keeps, on a v1alpha2
	// APIBinding, the v1alpha1 status.appliedPermissionClaims v1alpha2
	// cannot express.
	StatusAppliedClaimsV1Alpha1Annotation = "apis.v1alpha2.kcp.io/v1alpha1-status-applied-permission-claims"
)

// VerbAll stands for every verb in a claim.
const VerbAll = "*"

func addConversionFuncs(s *runtime.Scheme) error {
	for _, f := range []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*APIExport)(nil), (*apisv1alpha1.APIExport)(nil), func(a, b any, _ conversion.Scope) error {
			return ConvertAPIExportToV1alpha1(a.(*APIExport), b.(*apisv1alpha1.APIExport))
		}},
		{(*apisv1alpha1.APIExport)(nil), (*APIExport)(nil), func(a, b any, _ conversion.Scope) error {
			return ConvertAPIExportFromV1alpha1(a.(*apisv1alpha1.APIExport), b.(*APIExport))
		}},
		{(*APIExportList)(nil), (*apisv1alpha1.APIExportList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*APIExportList), b.(*apisv1alpha1.APIExportList)
			out.TypeMeta, out.ListMeta = in.TypeMeta, in.ListMeta
			return convertItems(in.Items, &out.Items, ConvertAPIExportToV1alpha1)
		}},
		{(*apisv1alpha1.APIExportList)(nil), (*APIExportList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*apisv1alpha1.APIExportList), b.(*APIExportList)
			out.TypeMeta, out.ListMeta = in.TypeMeta, in.ListMeta
			return convertItems(in.Items, &out.Items, ConvertAPIExportFromV1alpha1)
		}},
		{(*APIBinding)(nil), (*apisv1alpha1.APIBinding)(nil), func(a, b any, _ conversion.Scope) error {
			return ConvertAPIBindingToV1alpha1(a.(*APIBinding), b.(*apisv1alpha1.APIBinding))
		}},
		{(*apisv1alpha1.APIBinding)(nil), (*APIBinding)(nil), func(a, b any, _ conversion.Scope) error {
			return ConvertAPIBindingFromV1alpha1(a.(*apisv1alpha1.APIBinding), b.(*APIBinding))
		}},
		{(*APIBindingList)(nil), (*apisv1alpha1.APIBindingList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*APIBindingList), b.(*apisv1alpha1.APIBindingList)
			out.TypeMeta, out.ListMeta = in.TypeMeta, in.ListMeta
			return convertItems(in.Items, &out.Items, ConvertAPIBindingToV1alpha1)
		}},
		{(*apisv1alpha1.APIBindingList)(nil), (*APIBindingList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*apisv1alpha1.APIBindingList), b.(*APIBindingList)
			out.TypeMeta, out.ListMeta = in.TypeMeta, in.ListMeta
			return convertItems(in.Items, &out.Items, ConvertAPIBindingFromV1alpha1)
		}},
	} {
		if err := s.AddConversionFunc(f.a, f.b, f.fn); err != nil {
			return err
		}
	}
	return nil
}

// convertItems converts the items of a list.
func convertItems[I, O any](in []I, out *[]O, convert func(*I, *O) error) error {
	if in == nil {
		*out = nil
		return nil
	}
	*out = make([]O, len(in))
	for i := range in {
		if err := convert(&in[i], &(*out)[i]); err != nil {
			return err
		}
	}
	return nil
}

// isAllVerbs tells whether verbs is ["*"], what a v1alpha1 claim means.
func isAllVerbs(verbs []string) bool { return len(verbs) == 1 && verbs[0] == VerbAll }

// isMatchAll tells whether a selector reaches every object, what a
// v1alpha1 claim with all: true means.
func isMatchAll(s PermissionClaimSelector) bool {
	return s.MatchAll && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// SchemaResource returns the resource and group an APIResourceSchema name
// <prefix>.<plural>.<group> defines (the group "core" is the core group
// ""), and false when the name has fewer than three segments.
func SchemaResource(schema string) (name, group string, ok bool) {
	parts := strings.SplitN(schema, ".", 3)
	if len(parts) < 3 {
		return "", "", false
	}
	group = parts[2]
	if group == "core" {
		group = ""
	}
	return parts[1], group, true
}

// latestSchemaOf tells whether v1alpha1's latestResourceSchemas can hold
// r: storage crd, and the name and group the schema's name says.
func latestSchemaOf(r ResourceSchema) bool {
	if r.Storage.CRD == nil || r.Storage.Virtual != nil {
		return false
	}
	name, group, _ := SchemaResource(r.Schema)
	return name == r.Name && group == r.Group
}

// setAnnotation sets the JSON of v as annotation key of m, or removes the
// key when v is empty.
func setAnnotation[T any](m *map[string]string, key string, v []T) error {
	if len(v) == 0 {
		delete(*m, key)
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the annotation %s: %w", key, err)
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[key] = string(b)
	return nil
}

// takeAnnotation decodes and removes annotation key of m; found is false
// when m has no such key.
func takeAnnotation[T any](m *map[string]string, key string) (v []T, found bool, err error) {
	s, ok := (*m)[key]
	if !ok {
		return nil, false, nil
	}
	delete(*m, key)
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, true, fmt.Errorf("decoding the annotation %s: %w", key, err)
	}
	return v, true, nil
}

// nilIfEmpty makes an empty annotation map nil, so a round trip keeps an
// object without annotations as it was.
func nilIfEmpty(m *map[string]string) {
	if len(*m) == 0 {
		*m = nil
	}
}

// ExportPermissionClaims returns the v1alpha2 claims of a stored export:
// its v1alpha1 claims with the verbs the annotation keeps, ["*"] for
// claims without.
func ExportPermissionClaims(e *apisv1alpha1.APIExport) ([]PermissionClaim, error) {
	var out APIExport
	if err := ConvertAPIExportFromV1alpha1(e, &out); err != nil {
		return nil, err
	}
	return out.Spec.PermissionClaims, nil
}

// BindingPermissionClaims returns the v1alpha2 answers of a stored
// binding: its v1alpha1 answers with the verbs and selectors the
// annotation keeps.
func BindingPermissionClaims(b *apisv1alpha1.APIBinding) ([]AcceptablePermissionClaim, error) {
	in := &apisv1alpha1.APIBinding{ObjectMeta: b.ObjectMeta, Spec: b.Spec}
	var out APIBinding
	if err := ConvertAPIBindingFromV1alpha1(in, &out); err != nil {
		return nil, err
	}
	return out.Spec.PermissionClaims, nil
}
