// Package apibindings serves apis.kcp.io/v1alpha1 (and, converted by the
// scheme, v1alpha2) APIBindings: the binding
// of an APIExport's resources into the binding's logical cluster, and the
// consumer's answers to the export's permission claims.
//
// Like kcp, which serves them as CRDs with a status subresource, writes of
// the binding keep the status and bump the generation when the spec
// changes, and writes of the status keep everything else. The export a
// binding names cannot change. The older form of the reference,
// workspace{path, exportName}, is accepted and stored as export{path,
// name}. Whether the user may bind to the export is the business of the
// APIBinding admission, not of this storage.
package apibindings

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
	"github.com/tessera-dev/tessera/shard/registry/apis/apiexports"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// strategy is the create, update and delete strategy of bindings. Writes
// keep the status, which only the status subresource changes.
type strategy struct {
	store.WithStatus[*apisv1alpha1.APIBinding]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewWithStatus(store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate), apisv1alpha1.SchemeGroupVersion, parts).AlsoServedAs(apisv1alpha2.SchemeGroupVersion)}
}

// parts returns the metadata, spec and status of an APIBinding.
func parts(b *apisv1alpha1.APIBinding) (*metav1.ObjectMeta, *apisv1alpha1.APIBindingSpec, *apisv1alpha1.APIBindingStatus) {
	return &b.ObjectMeta, &b.Spec, &b.Status
}

// PrepareForCreate drops the status, starts the generation at 1, turns
// the older form of the reference into the current one and adds the
// binding controller's finalizer (which it would add in a write of its
// own otherwise).
func (s strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.WithStatus.PrepareForCreate(ctx, obj)
	b := obj.(*apisv1alpha1.APIBinding)
	convertReference(&b.Spec.Reference)
	if !slices.Contains(b.Finalizers, apisv1alpha1.APIBindingFinalizer) {
		b.Finalizers = append(b.Finalizers, apisv1alpha1.APIBindingFinalizer)
	}
}

// PrepareForUpdate turns the older form of the reference into the current
// one, keeps the stored status (and the annotations of its v1alpha2 form),
// and bumps the generation when the spec changes.
func (s strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	convertReference(&obj.(*apisv1alpha1.APIBinding).Spec.Reference)
	s.WithStatus.PrepareForUpdate(ctx, obj, old)
	copyStatusAnnotations(obj.(*apisv1alpha1.APIBinding), old.(*apisv1alpha1.APIBinding))
}

// statusAnnotations keep the v1alpha2 form of status claims (see package
// v1alpha2): they go with the status, not with the metadata.
var statusAnnotations = []string{apisv1alpha2.StatusPermissionClaimsAnnotation, apisv1alpha2.StatusAppliedClaimsAnnotation}

// copyStatusAnnotations sets the status annotations of to those of from.
func copyStatusAnnotations(to, from *apisv1alpha1.APIBinding) {
	for _, key := range statusAnnotations {
		v, ok := from.Annotations[key]
		switch {
		case ok && to.Annotations == nil:
			to.Annotations = map[string]string{key: v}
		case ok:
			to.Annotations[key] = v
		default:
			delete(to.Annotations, key)
		}
	}
	if len(to.Annotations) == 0 {
		to.Annotations = nil
	}
}

// convertReference turns workspace{path, exportName}, the older form of
// the reference, into export{path, name}. A reference with both forms
// keeps both when they name different exports, for validation to refuse.
func convertReference(ref *apisv1alpha1.BindingReference) {
	w := ref.Workspace
	if w == nil {
		return
	}
	export := apisv1alpha1.ExportBindingReference{Path: w.Path, Name: w.ExportName}
	switch {
	case ref.Export == nil:
		ref.Export = &export
	case *ref.Export != export:
		return
	}
	ref.Workspace = nil
}

// validate validates a new binding, whose reference PrepareForCreate
// converted.
func validate(b *apisv1alpha1.APIBinding) field.ErrorList {
	errs := validation.ValidateObjectMeta(&b.ObjectMeta, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&b.Spec, field.NewPath("spec"))...)
	return append(errs, apiexports.ValidateBindingV1alpha2(b)...)
}

// validateUpdate validates an update: the reference cannot change.
func validateUpdate(b, old *apisv1alpha1.APIBinding) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&b.Spec, field.NewPath("spec"))...)
	errs = append(errs, apiexports.ValidateBindingV1alpha2(b)...)
	if !apiequality.Semantic.DeepEqual(b.Spec.Reference, old.Spec.Reference) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "reference"), "object", apiexports.ReferenceImmutable))
	}
	return errs
}

// claimStates are the answers to a claim.
var claimStates = []apisv1alpha1.AcceptablePermissionClaimState{apisv1alpha1.ClaimAccepted, apisv1alpha1.ClaimRejected}

// validateSpec validates the spec of a binding: it names an export, in
// one form (apiexports.ValidateReference), and answers claims that are
// well formed (apiexports.ValidatePermissionClaims) with Accepted or
// Rejected. Unlike an export's claims, the claims a binding answers need
// no identity hash: kcp asks it of exports only, and a binding's answer
// that matches no claim of the export has no effect.
func validateSpec(spec *apisv1alpha1.APIBindingSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ref, rp := spec.Reference, p.Child("reference")
	switch {
	case ref.Export == nil:
		errs = append(errs, field.Required(rp.Child("export"), ""))
	case ref.Workspace != nil:
		errs = append(errs, field.Invalid(rp.Child("workspace"), "object",
			fmt.Sprintf("names the export %q at %q, but export names %q at %q: workspace is the older form of export, set one of them",
				ref.Workspace.ExportName, ref.Workspace.Path, ref.Export.Name, ref.Export.Path)))
	default:
		errs = append(errs, apiexports.ValidateReference(*ref.Export, rp.Child("export"))...)
	}
	claims := make([]apisv1alpha1.PermissionClaim, 0, len(spec.PermissionClaims))
	cp := p.Child("permissionClaims")
	for i, c := range spec.PermissionClaims {
		claims = append(claims, c.PermissionClaim)
		if !sets.New(claimStates...).Has(c.State) {
			errs = append(errs, field.NotSupported(cp.Index(i).Child("state"), c.State, claimStates))
		}
	}
	return append(errs, apiexports.ValidatePermissionClaims(claims, cp)...)
}

// statusStrategy updates the status only.
type statusStrategy struct{ strategy }

// GetResetFields: a status write keeps the spec and the metadata.
func (s statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.StatusResetFields()
}

// PrepareForUpdate keeps the stored spec and metadata, except the managed
// fields the write changed and the annotations that keep the v1alpha2 form
// of the status.
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	written := obj.(*apisv1alpha1.APIBinding).DeepCopy()
	s.PrepareForStatusUpdate(ctx, obj, old)
	copyStatusAnnotations(obj.(*apisv1alpha1.APIBinding), written)
}

// phases are the phases of a binding; "" until the controller first sees it.
var phases = []apisv1alpha1.APIBindingPhaseType{"", apisv1alpha1.APIBindingPhaseBinding, apisv1alpha1.APIBindingPhaseBound}

// ValidateUpdate validates the status: a known phase, which once set is
// never unset again (kcp's APIBinding validation), and bound resources
// listed once, each with the name, UID and identity hash of its schema.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	b, oldB := obj.(*apisv1alpha1.APIBinding), old.(*apisv1alpha1.APIBinding)
	errs := validation.ValidateObjectMetaUpdate(&b.ObjectMeta, &oldB.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	switch phase := b.Status.Phase; {
	case !sets.New(phases...).Has(phase):
		errs = append(errs, field.NotSupported(p.Child("phase"), phase, phases))
	case phase == "" && oldB.Status.Phase != "":
		errs = append(errs, field.Forbidden(p.Child("phase"), fmt.Sprintf("cannot transition from %q to %q", oldB.Status.Phase, phase)))
	}
	seen := sets.New[apisv1alpha1.GroupResource]()
	for i, r := range b.Status.BoundResources {
		rp := p.Child("boundResources").Index(i)
		gr := apisv1alpha1.GroupResource{Group: r.Group, Resource: r.Resource}
		if seen.Has(gr) {
			errs = append(errs, field.Duplicate(rp, map[string]interface{}{"group": r.Group, "resource": r.Resource}))
		}
		seen.Insert(gr)
		for _, f := range []struct{ name, value string }{{"name", r.Schema.Name}, {"UID", r.Schema.UID}, {"identityHash", r.Schema.IdentityHash}} {
			if f.value == "" {
				errs = append(errs, field.Required(rp.Child("schema", f.name), ""))
			}
		}
	}
	return errs
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
