package v1alpha2

import (
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

// ConvertAPIExportToV1alpha1 converts a v1alpha2 export into its v1alpha1
// (stored) form. Resources that latestResourceSchemas can hold become its
// schema names, the others are kept in ResourceSchemasAnnotation; every
// claim becomes a claim of all objects, and those whose verbs are not
// ["*"] or that have a defaultSelector are kept in
// PermissionClaimsAnnotation. What a previous
// conversion from v1alpha1 kept in PermissionClaimsV1Alpha1Annotation
// (all and resourceSelector) is restored.
func ConvertAPIExportToV1alpha1(in *APIExport, out *apisv1alpha1.APIExport) error {
	out.TypeMeta = in.TypeMeta
	out.ObjectMeta = *in.ObjectMeta.DeepCopy()
	out.Spec = apisv1alpha1.APIExportSpec{}
	ann := &out.Annotations

	var other []ResourceSchema
	for _, r := range in.Spec.Resources {
		if latestSchemaOf(r) {
			out.Spec.LatestResourceSchemas = append(out.Spec.LatestResourceSchemas, r.Schema)
		} else {
			other = append(other, *r.DeepCopy())
		}
	}
	if err := setAnnotation(ann, ResourceSchemasAnnotation, other); err != nil {
		return err
	}

	if in.Spec.Identity != nil {
		out.Spec.Identity = &apisv1alpha1.Identity{SecretRef: in.Spec.Identity.SecretRef.DeepCopy()}
	}
	if p := in.Spec.MaximalPermissionPolicy; p != nil {
		out.Spec.MaximalPermissionPolicy = &apisv1alpha1.MaximalPermissionPolicy{}
		if p.Local != nil {
			out.Spec.MaximalPermissionPolicy.Local = &apisv1alpha1.LocalAPIExportPolicy{}
		}
	}
	var narrowed []PermissionClaim
	out.Spec.PermissionClaims, narrowed = claimsToV1alpha1(in.Spec.PermissionClaims)
	if err := setAnnotation(ann, PermissionClaimsAnnotation, narrowed); err != nil {
		return err
	}
	v1Claims, _, err := takeAnnotation[apisv1alpha1.PermissionClaim](ann, PermissionClaimsV1Alpha1Annotation)
	if err != nil {
		return err
	}
	restoreV1alpha1Selection(out.Spec.PermissionClaims, v1Claims)
	nilIfEmpty(ann)

	out.Status = apisv1alpha1.APIExportStatus{
		IdentityHash: in.Status.IdentityHash,
		Conditions:   in.Status.Conditions.DeepCopy(),
	}
	if in.Status.VirtualWorkspaces != nil {
		out.Status.VirtualWorkspaces = make([]apisv1alpha1.VirtualWorkspace, len(in.Status.VirtualWorkspaces))
		for i, w := range in.Status.VirtualWorkspaces {
			out.Status.VirtualWorkspaces[i] = apisv1alpha1.VirtualWorkspace{URL: w.URL}
		}
	}
	return nil
}

// ConvertAPIExportFromV1alpha1 converts a v1alpha1 (stored) export into
// v1alpha2: latestResourceSchemas become resources stored as CRDs, after
// which come the resources ResourceSchemasAnnotation keeps; claims get the
// verbs PermissionClaimsAnnotation keeps, ["*"] otherwise. Claims v1alpha2
// cannot express (a resourceSelector) are kept in
// PermissionClaimsV1Alpha1Annotation.
func ConvertAPIExportFromV1alpha1(in *apisv1alpha1.APIExport, out *APIExport) error {
	out.TypeMeta = in.TypeMeta
	out.ObjectMeta = *in.ObjectMeta.DeepCopy()
	out.Spec = APIExportSpec{}
	ann := &out.Annotations

	for _, s := range in.Spec.LatestResourceSchemas {
		name, group, _ := SchemaResource(s)
		out.Spec.Resources = append(out.Spec.Resources, ResourceSchema{
			Name: name, Group: group, Schema: s,
			Storage: ResourceSchemaStorage{CRD: &ResourceSchemaStorageCRD{}},
		})
	}
	other, _, err := takeAnnotation[ResourceSchema](ann, ResourceSchemasAnnotation)
	if err != nil {
		return err
	}
	out.Spec.Resources = append(out.Spec.Resources, other...)

	if in.Spec.Identity != nil {
		out.Spec.Identity = &Identity{SecretRef: in.Spec.Identity.SecretRef.DeepCopy()}
	}
	if p := in.Spec.MaximalPermissionPolicy; p != nil {
		out.Spec.MaximalPermissionPolicy = &MaximalPermissionPolicy{}
		if p.Local != nil {
			out.Spec.MaximalPermissionPolicy.Local = &LocalAPIExportPolicy{}
		}
	}

	var v1Only []apisv1alpha1.PermissionClaim
	out.Spec.PermissionClaims, v1Only = claimsFromV1alpha1(in.Spec.PermissionClaims)
	if err := setAnnotation(ann, PermissionClaimsV1Alpha1Annotation, v1Only); err != nil {
		return err
	}
	verbs, _, err := takeAnnotation[PermissionClaim](ann, PermissionClaimsAnnotation)
	if err != nil {
		return err
	}
	restoreVerbs(out.Spec.PermissionClaims, verbs)
	nilIfEmpty(ann)

	out.Status = APIExportStatus{
		IdentityHash: in.Status.IdentityHash,
		Conditions:   in.Status.Conditions.DeepCopy(),
	}
	if in.Status.VirtualWorkspaces != nil {
		out.Status.VirtualWorkspaces = make([]VirtualWorkspace, len(in.Status.VirtualWorkspaces))
		for i, w := range in.Status.VirtualWorkspaces {
			out.Status.VirtualWorkspaces[i] = VirtualWorkspace{URL: w.URL}
		}
	}
	return nil
}

// claimsToV1alpha1 converts v1alpha2 claims into v1alpha1 claims of all
// objects, and returns apart those whose verbs are not ["*"].
func claimsToV1alpha1(in []PermissionClaim) (out []apisv1alpha1.PermissionClaim, narrowed []PermissionClaim) {
	if in == nil {
		return nil, nil
	}
	out = make([]apisv1alpha1.PermissionClaim, 0, len(in))
	for _, c := range in {
		out = append(out, claimToV1alpha1(c))
		if !isAllVerbs(c.Verbs) || c.DefaultSelector != nil {
			narrowed = append(narrowed, *c.DeepCopy())
		}
	}
	return out, narrowed
}

func claimToV1alpha1(c PermissionClaim) apisv1alpha1.PermissionClaim {
	return apisv1alpha1.PermissionClaim{
		GroupResource: apisv1alpha1.GroupResource{Group: c.Group, Resource: c.Resource},
		All:           true,
		IdentityHash:  c.IdentityHash,
	}
}

// claimsFromV1alpha1 converts v1alpha1 claims into v1alpha2 claims of all
// verbs, and returns apart those v1alpha2 cannot express: claims that are
// a resourceSelector.
func claimsFromV1alpha1(in []apisv1alpha1.PermissionClaim) (out []PermissionClaim, v1Only []apisv1alpha1.PermissionClaim) {
	if in == nil {
		return nil, nil
	}
	out = make([]PermissionClaim, 0, len(in))
	for _, c := range in {
		out = append(out, claimFromV1alpha1(c))
		if len(c.ResourceSelector) > 0 {
			v1Only = append(v1Only, *c.DeepCopy())
		}
	}
	return out, v1Only
}

func claimFromV1alpha1(c apisv1alpha1.PermissionClaim) PermissionClaim {
	return PermissionClaim{
		Group: c.Group, Resource: c.Resource,
		Verbs:        []string{VerbAll},
		IdentityHash: c.IdentityHash,
	}
}

// restoreVerbs gives each claim the verbs and defaultSelector of the kept
// claim of the same group, resource and identity.
func restoreVerbs(claims, kept []PermissionClaim) {
	for _, k := range kept {
		for i := range claims {
			if claims[i].EqualGRI(k) {
				claims[i].Verbs = k.Verbs
				claims[i].DefaultSelector = k.DefaultSelector.DeepCopy()
			}
		}
	}
}

// restoreV1alpha1Selection gives each claim all and resourceSelector of
// the kept v1alpha1 claim of the same group, resource and identity.
func restoreV1alpha1Selection(claims, kept []apisv1alpha1.PermissionClaim) {
	for _, k := range kept {
		for i := range claims {
			if claims[i].EqualGRI(k) {
				claims[i].All = k.All
				claims[i].ResourceSelector = k.ResourceSelector
			}
		}
	}
}
