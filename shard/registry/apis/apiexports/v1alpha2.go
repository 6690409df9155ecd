package apiexports

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
)

// What v1alpha2 says that v1alpha1 cannot is stored in annotations (see
// package v1alpha2); validation reads it back from there. Anything a
// shard cannot honour is refused here rather than stored and ignored.

// ClaimVerbs are the verbs a claim may name: those the apiexport virtual
// workspace serves on claimed resources, each of which it checks against
// the claim, and "*" for all of them.
var ClaimVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", apisv1alpha2.VerbAll}

// ValidateClaimVerbs validates the verbs of a v1alpha2 claim, on p: at
// least one, each a verb of ClaimVerbs, none twice.
func ValidateClaimVerbs(verbs []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(verbs) == 0 {
		return field.ErrorList{field.Required(p, "at least one verb, or \"*\" for all of them")}
	}
	seen := sets.New[string]()
	for i, v := range verbs {
		switch {
		case seen.Has(v):
			errs = append(errs, field.Duplicate(p.Index(i), v))
		case !slices.Contains(ClaimVerbs, v):
			errs = append(errs, field.NotSupported(p.Index(i), v, ClaimVerbs))
		}
		seen.Insert(v)
	}
	return errs
}

// annotationPath is the path of annotation key, for errors about what it
// holds.
func annotationPath(key string) *field.Path {
	return field.NewPath("metadata", "annotations").Key(key)
}

// validateV1alpha2 validates what an export says in v1alpha2 only: the
// verbs of its claims, and resources that latestResourceSchemas cannot
// hold (which a shard cannot serve: kcp's virtual storage, or a name and
// group other than those of the schema's name).
func validateV1alpha2(e *apisv1alpha1.APIExport) field.ErrorList {
	var errs field.ErrorList
	var v2 apisv1alpha2.APIExport
	if err := apisv1alpha2.ConvertAPIExportFromV1alpha1(e, &v2); err != nil {
		for _, key := range []string{apisv1alpha2.PermissionClaimsAnnotation, apisv1alpha2.ResourceSchemasAnnotation} {
			if _, ok := e.Annotations[key]; ok {
				errs = append(errs, field.Invalid(annotationPath(key), e.Annotations[key], err.Error()))
			}
		}
		return errs
	}
	p := field.NewPath("spec")
	for i, c := range v2.Spec.PermissionClaims {
		cp := p.Child("permissionClaims").Index(i)
		errs = append(errs, ValidateClaimVerbs(c.Verbs, cp.Child("verbs"))...)
		if c.DefaultSelector != nil {
			errs = append(errs, validateSelector(*c.DefaultSelector, true, cp.Child("defaultSelector"))...)
		}
	}
	for i, r := range v2.Spec.Resources {
		if i < len(e.Spec.LatestResourceSchemas) {
			continue
		}
		rp := p.Child("resources").Index(i)
		name, group, _ := apisv1alpha2.SchemaResource(r.Schema)
		switch {
		case r.Storage.Virtual != nil:
			errs = append(errs, field.Forbidden(rp.Child("storage", "virtual"), "virtual storage is not supported by this server: use crd"))
		case r.Storage.CRD == nil:
			errs = append(errs, field.Required(rp.Child("storage", "crd"), "exactly one of crd or virtual must be set"))
		case r.Name != name || r.Group != group:
			errs = append(errs, field.Invalid(rp, fmt.Sprintf("%s.%s", r.Name, r.Group),
				fmt.Sprintf("name and group must be those the schema %q defines (<prefix>.<name>.<group>): %q and %q", r.Schema, name, group)))
		}
	}
	return errs
}

// ValidateBindingV1alpha2 validates what a binding says in v1alpha2 only:
// the verbs of its answers, and their selectors, which must be well formed
// and, for accepted claims, reach all objects (matchAll): a shard does not
// select claimed objects by label.
func ValidateBindingV1alpha2(b *apisv1alpha1.APIBinding) field.ErrorList {
	claims, err := apisv1alpha2.BindingPermissionClaims(b)
	if err != nil {
		key := apisv1alpha2.AcceptablePermissionClaimsAnnotation
		return field.ErrorList{field.Invalid(annotationPath(key), b.Annotations[key], err.Error())}
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "permissionClaims")
	for i, c := range claims {
		cp := p.Index(i)
		errs = append(errs, ValidateClaimVerbs(c.Verbs, cp.Child("verbs"))...)
		errs = append(errs, validateSelector(c.Selector, c.State == apisv1alpha2.ClaimAccepted, cp.Child("selector"))...)
	}
	return errs
}

// validateSelector validates a claim's selector, on p: well formed and,
// when it takes effect (an accepted claim, an export's default), matchAll.
func validateSelector(s apisv1alpha2.PermissionClaimSelector, inEffect bool, p *field.Path) field.ErrorList {
	hasLabels := len(s.MatchLabels) > 0 || len(s.MatchExpressions) > 0
	switch {
	case s.MatchAll && hasLabels:
		return field.ErrorList{field.Invalid(p, selectorString(s), "matchLabels and matchExpressions cannot be used with matchAll")}
	case hasLabels && inEffect:
		return field.ErrorList{field.Forbidden(p, "selecting claimed objects by label is not supported by this server: use matchAll")}
	case !s.MatchAll && !hasLabels:
		return field.ErrorList{field.Required(p, "either one of matchAll, matchLabels, or matchExpressions must be set")}
	}
	return nil
}

func selectorString(s apisv1alpha2.PermissionClaimSelector) string {
	return metav1.FormatLabelSelector(&s.LabelSelector)
}
