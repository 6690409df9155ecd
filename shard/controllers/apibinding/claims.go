package apibinding

import (
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
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
