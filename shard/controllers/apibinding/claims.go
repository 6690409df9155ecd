package apibinding

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// statusClaimAnnotations are the annotations that keep the v1alpha2 form of
// a binding's status claims (see package v1alpha2).
var statusClaimAnnotations = []string{apisv1alpha2.StatusPermissionClaimsAnnotation, apisv1alpha2.StatusAppliedClaimsAnnotation}

// setStatusClaimAnnotations sets on b the annotations that keep what the
// v1alpha2 form of its status says of claims beyond v1alpha1: the verbs of
// the export's claims (status.exportPermissionClaims), and the verbs and
// selectors of the answers in effect (status.appliedPermissionClaims).
// Without them, a binding read in v1alpha2 would show every claim with all
// verbs. A status write keeps them (the registry's status strategy). An
// annotation that does not decode, which admission refuses, leaves b as it
// is.
func setStatusClaimAnnotations(b *apisv1alpha1.APIBinding, export *apisv1alpha1.APIExport) {
	var v2 apisv1alpha2.APIBinding
	if err := apisv1alpha2.ConvertAPIBindingFromV1alpha1(b, &v2); err != nil {
		return
	}
	claims, err := apisv1alpha2.ExportPermissionClaims(export)
	if err != nil {
		return
	}
	for i, c := range v2.Status.ExportPermissionClaims {
		for _, e := range claims {
			if e.EqualGRI(c) {
				v2.Status.ExportPermissionClaims[i].Verbs = e.Verbs
			}
		}
	}
	for i, c := range v2.Status.AppliedPermissionClaims {
		for _, a := range v2.Spec.PermissionClaims {
			if a.State == apisv1alpha2.ClaimAccepted && a.EqualGRI(c.PermissionClaim) {
				v2.Status.AppliedPermissionClaims[i] = *a.ScopedPermissionClaim.DeepCopy()
			}
		}
	}
	var out apisv1alpha1.APIBinding
	if err := apisv1alpha2.ConvertAPIBindingToV1alpha1(&v2, &out); err != nil {
		return
	}
	for _, key := range statusClaimAnnotations {
		v, ok := out.Annotations[key]
		switch {
		case ok && b.Annotations == nil:
			b.Annotations = map[string]string{key: v}
		case ok:
			b.Annotations[key] = v
		default:
			delete(b.Annotations, key)
		}
	}
	if len(b.Annotations) == 0 {
		b.Annotations = nil
	}
}

// statusClaimAnnotationsEqual tells whether a and b have the same status
// claim annotations.
func statusClaimAnnotationsEqual(a, b *apisv1alpha1.APIBinding) bool {
	for _, key := range statusClaimAnnotations {
		va, oka := a.Annotations[key]
		vb, okb := b.Annotations[key]
		if oka != okb || va != vb {
			return false
		}
	}
	return true
}

// setClaimsCondition sets b's PermissionClaimsValid condition, as kcp's
// permission claim controller does: False (InvalidPermissionClaims) when
// b accepts a claim the export does not make; else False, a warning
// (PermissionClaimsMismatch), when an accepted claim names other verbs than
// the export's (unless either side says "*") or another selector than the
// export's defaultSelector; True otherwise.
func setClaimsCondition(b *apisv1alpha1.APIBinding, export *apisv1alpha1.APIExport) {
	answers, err := apisv1alpha2.BindingPermissionClaims(b)
	if err != nil {
		return
	}
	claims, err := apisv1alpha2.ExportPermissionClaims(export)
	if err != nil {
		return
	}
	var invalid, mismatched []string
	for _, a := range answers {
		if a.State != apisv1alpha2.ClaimAccepted {
			continue
		}
		i := slices.IndexFunc(claims, func(c apisv1alpha2.PermissionClaim) bool { return c.EqualGRI(a.PermissionClaim) })
		if i < 0 {
			invalid = append(invalid, a.PermissionClaim.String())
			continue
		}
		exported := claims[i]
		var parts []string
		if !slices.Contains(a.Verbs, apisv1alpha2.VerbAll) && !slices.Contains(exported.Verbs, apisv1alpha2.VerbAll) &&
			!sets.New(a.Verbs...).Equal(sets.New(exported.Verbs...)) {
			parts = append(parts, fmt.Sprintf("verbs: accepted %v, exported %v", a.Verbs, exported.Verbs))
		}
		if exported.DefaultSelector != nil && !equality.Semantic.DeepEqual(a.Selector, *exported.DefaultSelector) {
			parts = append(parts, "selector differs from defaultSelector")
		}
		if len(parts) > 0 {
			mismatched = append(mismatched, fmt.Sprintf("%s (%s)", a.PermissionClaim.String(), strings.Join(parts, "; ")))
		}
	}
	switch {
	case len(invalid) > 0:
		conditionsv1alpha1.MarkFalse(b, apisv1alpha1.PermissionClaimsValid, apisv1alpha1.InvalidPermissionClaimsReason, conditionsv1alpha1.ConditionSeverityError,
			"%d accepted permission claims the APIExport does not make: %s", len(invalid), strings.Join(invalid, ", "))
	case len(mismatched) > 0:
		conditionsv1alpha1.MarkFalse(b, apisv1alpha1.PermissionClaimsValid, apisv1alpha1.PermissionClaimsMismatchReason, conditionsv1alpha1.ConditionSeverityWarning,
			"%d permission claim(s) have mismatched verbs or selectors: %s", len(mismatched), strings.Join(mismatched, ", "))
	default:
		conditionsv1alpha1.MarkTrue(b, apisv1alpha1.PermissionClaimsValid)
	}
}
