package v1alpha2

import (
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

// ConvertAPIBindingToV1alpha1 converts a v1alpha2 binding into its
// v1alpha1 (stored) form. An answer reaches all objects when its selector
// is matchAll; answers whose verbs are not ["*"] or whose selector is not
// matchAll are kept whole in AcceptablePermissionClaimsAnnotation, and the
// status claims alike in StatusPermissionClaimsAnnotation and
// StatusAppliedClaimsAnnotation. What a previous conversion from v1alpha1
// kept (resourceSelectors) is restored.
func ConvertAPIBindingToV1alpha1(in *APIBinding, out *apisv1alpha1.APIBinding) error {
	out.TypeMeta = in.TypeMeta
	out.ObjectMeta = *in.ObjectMeta.DeepCopy()
	out.Spec = apisv1alpha1.APIBindingSpec{}
	out.Status = apisv1alpha1.APIBindingStatus{}
	ann := &out.Annotations

	if e := in.Spec.Reference.Export; e != nil {
		out.Spec.Reference.Export = &apisv1alpha1.ExportBindingReference{Path: e.Path, Name: e.Name}
	}
	var scoped []AcceptablePermissionClaim
	if in.Spec.PermissionClaims != nil {
		out.Spec.PermissionClaims = make([]apisv1alpha1.AcceptablePermissionClaim, 0, len(in.Spec.PermissionClaims))
	}
	for _, c := range in.Spec.PermissionClaims {
		out.Spec.PermissionClaims = append(out.Spec.PermissionClaims, apisv1alpha1.AcceptablePermissionClaim{
			PermissionClaim: scopedToV1alpha1(c.ScopedPermissionClaim),
			State:           apisv1alpha1.AcceptablePermissionClaimState(c.State),
		})
		if !isAllVerbs(c.Verbs) || !isMatchAll(c.Selector) {
			scoped = append(scoped, *c.DeepCopy())
		}
	}
	if err := setAnnotation(ann, AcceptablePermissionClaimsAnnotation, scoped); err != nil {
		return err
	}
	kept, _, err := takeAnnotation[apisv1alpha1.AcceptablePermissionClaim](ann, PermissionClaimsV1Alpha1Annotation)
	if err != nil {
		return err
	}
	for _, k := range kept {
		for i := range out.Spec.PermissionClaims {
			if c := &out.Spec.PermissionClaims[i]; c.EqualGRI(k.PermissionClaim) {
				c.All, c.ResourceSelector = k.All, k.ResourceSelector
			}
		}
	}

	st := &out.Status
	st.APIExportClusterName = in.Status.APIExportClusterName
	st.Phase = apisv1alpha1.APIBindingPhaseType(in.Status.Phase)
	st.Conditions = in.Status.Conditions.DeepCopy()
	if in.Status.BoundResources != nil {
		st.BoundResources = make([]apisv1alpha1.BoundAPIResource, len(in.Status.BoundResources))
		for i, r := range in.Status.BoundResources {
			st.BoundResources[i] = apisv1alpha1.BoundAPIResource{
				Group: r.Group, Resource: r.Resource,
				Schema:          apisv1alpha1.BoundAPIResourceSchema{Name: r.Schema.Name, UID: r.Schema.UID, IdentityHash: r.Schema.IdentityHash},
				StorageVersions: append([]string(nil), r.StorageVersions...),
			}
		}
	}
	var narrowed []PermissionClaim
	st.ExportPermissionClaims, narrowed = claimsToV1alpha1(in.Status.ExportPermissionClaims)
	if err := setAnnotation(ann, StatusPermissionClaimsAnnotation, narrowed); err != nil {
		return err
	}
	var applied []ScopedPermissionClaim
	if in.Status.AppliedPermissionClaims != nil {
		st.AppliedPermissionClaims = make([]apisv1alpha1.PermissionClaim, 0, len(in.Status.AppliedPermissionClaims))
	}
	for _, c := range in.Status.AppliedPermissionClaims {
		st.AppliedPermissionClaims = append(st.AppliedPermissionClaims, scopedToV1alpha1(c))
		if !isAllVerbs(c.Verbs) || !isMatchAll(c.Selector) {
			applied = append(applied, *c.DeepCopy())
		}
	}
	if err := setAnnotation(ann, StatusAppliedClaimsAnnotation, applied); err != nil {
		return err
	}
	for key, claims := range map[string][]apisv1alpha1.PermissionClaim{
		StatusPermissionClaimsV1Alpha1Annotation: st.ExportPermissionClaims,
		StatusAppliedClaimsV1Alpha1Annotation:    st.AppliedPermissionClaims,
	} {
		kept, _, err := takeAnnotation[apisv1alpha1.PermissionClaim](ann, key)
		if err != nil {
			return err
		}
		restoreV1alpha1Selection(claims, kept)
	}
	nilIfEmpty(ann)
	return nil
}

// scopedToV1alpha1 converts a claim and its selector: all objects when the
// selector is matchAll.
func scopedToV1alpha1(c ScopedPermissionClaim) apisv1alpha1.PermissionClaim {
	out := claimToV1alpha1(c.PermissionClaim)
	out.All = c.Selector.MatchAll
	return out
}

// ConvertAPIBindingFromV1alpha1 converts a v1alpha1 (stored) binding into
// v1alpha2: answers and status claims get the verbs and selectors the
// annotations keep, and otherwise verbs ["*"] and a matchAll selector.
// Claims v1alpha2 cannot express (a resourceSelector) are
// kept in the v1alpha1 annotations.
func ConvertAPIBindingFromV1alpha1(in *apisv1alpha1.APIBinding, out *APIBinding) error {
	out.TypeMeta = in.TypeMeta
	out.ObjectMeta = *in.ObjectMeta.DeepCopy()
	out.Spec = APIBindingSpec{}
	out.Status = APIBindingStatus{}
	ann := &out.Annotations

	switch ref := in.Spec.Reference; {
	case ref.Export != nil:
		out.Spec.Reference.Export = &ExportBindingReference{Path: ref.Export.Path, Name: ref.Export.Name}
	case ref.Workspace != nil:
		out.Spec.Reference.Export = &ExportBindingReference{Path: ref.Workspace.Path, Name: ref.Workspace.ExportName}
	}
	var v1Only []apisv1alpha1.AcceptablePermissionClaim
	if in.Spec.PermissionClaims != nil {
		out.Spec.PermissionClaims = make([]AcceptablePermissionClaim, 0, len(in.Spec.PermissionClaims))
	}
	for _, c := range in.Spec.PermissionClaims {
		out.Spec.PermissionClaims = append(out.Spec.PermissionClaims, AcceptablePermissionClaim{
			ScopedPermissionClaim: scopedFromV1alpha1(c.PermissionClaim),
			State:                 AcceptablePermissionClaimState(c.State),
		})
		if len(c.ResourceSelector) > 0 {
			v1Only = append(v1Only, *c.DeepCopy())
		}
	}
	if err := setAnnotation(ann, PermissionClaimsV1Alpha1Annotation, v1Only); err != nil {
		return err
	}
	kept, _, err := takeAnnotation[AcceptablePermissionClaim](ann, AcceptablePermissionClaimsAnnotation)
	if err != nil {
		return err
	}
	for _, k := range kept {
		for i := range out.Spec.PermissionClaims {
			if c := &out.Spec.PermissionClaims[i]; c.EqualGRI(k.PermissionClaim) {
				c.Verbs, c.Selector = k.Verbs, k.Selector
			}
		}
	}

	st := &out.Status
	st.APIExportClusterName = in.Status.APIExportClusterName
	st.Phase = APIBindingPhaseType(in.Status.Phase)
	st.Conditions = in.Status.Conditions.DeepCopy()
	if in.Status.BoundResources != nil {
		st.BoundResources = make([]BoundAPIResource, len(in.Status.BoundResources))
		for i, r := range in.Status.BoundResources {
			st.BoundResources[i] = BoundAPIResource{
				Group: r.Group, Resource: r.Resource,
				Schema:          BoundAPIResourceSchema{Name: r.Schema.Name, UID: r.Schema.UID, IdentityHash: r.Schema.IdentityHash},
				StorageVersions: append([]string(nil), r.StorageVersions...),
			}
		}
	}
	var v1OnlyExport []apisv1alpha1.PermissionClaim
	st.ExportPermissionClaims, v1OnlyExport = claimsFromV1alpha1(in.Status.ExportPermissionClaims)
	if err := setAnnotation(ann, StatusPermissionClaimsV1Alpha1Annotation, v1OnlyExport); err != nil {
		return err
	}
	keptExport, _, err := takeAnnotation[PermissionClaim](ann, StatusPermissionClaimsAnnotation)
	if err != nil {
		return err
	}
	restoreVerbs(st.ExportPermissionClaims, keptExport)

	var v1OnlyApplied []apisv1alpha1.PermissionClaim
	if in.Status.AppliedPermissionClaims != nil {
		st.AppliedPermissionClaims = make([]ScopedPermissionClaim, 0, len(in.Status.AppliedPermissionClaims))
	}
	for _, c := range in.Status.AppliedPermissionClaims {
		st.AppliedPermissionClaims = append(st.AppliedPermissionClaims, scopedFromV1alpha1(c))
		if len(c.ResourceSelector) > 0 {
			v1OnlyApplied = append(v1OnlyApplied, *c.DeepCopy())
		}
	}
	if err := setAnnotation(ann, StatusAppliedClaimsV1Alpha1Annotation, v1OnlyApplied); err != nil {
		return err
	}
	keptApplied, _, err := takeAnnotation[ScopedPermissionClaim](ann, StatusAppliedClaimsAnnotation)
	if err != nil {
		return err
	}
	for _, k := range keptApplied {
		for i := range st.AppliedPermissionClaims {
			if c := &st.AppliedPermissionClaims[i]; c.EqualGRI(k.PermissionClaim) {
				c.Verbs, c.Selector = k.Verbs, k.Selector
			}
		}
	}
	nilIfEmpty(ann)
	return nil
}

// scopedFromV1alpha1 converts a v1alpha1 claim into a claim of all verbs
// and all objects: v1alpha1 has no verbs, and its selectors by name are
// kept in an annotation (kcp reaches all objects for them too).
func scopedFromV1alpha1(c apisv1alpha1.PermissionClaim) ScopedPermissionClaim {
	return ScopedPermissionClaim{
		PermissionClaim: claimFromV1alpha1(c),
		Selector:        PermissionClaimSelector{MatchAll: true},
	}
}
