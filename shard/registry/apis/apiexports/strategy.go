// Package apiexports serves apis.kcp.io/v1alpha1 (and, converted by the
// scheme, v1alpha2) APIExports: the sets of
// APIResourceSchemas a provider's logical cluster offers for binding, with
// the identity their objects are stored under and the permission claims
// the provider asks consumers to accept.
//
// Like kcp, which serves them as CRDs with a status subresource, writes of
// the export keep the status and bump the generation when the spec
// changes, and writes of the status keep everything else. Validation is
// that of kcp's CRD schema and APIExport admission, with a few stricter
// rules where kcp accepts what can never work (see validateSpec). Who may
// bind is the business of the APIBinding admission, not of this storage.
//
// It also holds what the registries of APIBindings and
// APIExportEndpointSlices share with it: the validation of permission
// claims and of references to an export.
package apiexports

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
	"github.com/tessera-dev/tessera/shard/registry/apis/apiresourceschemas"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// strategy is the create, update and delete strategy of exports. Writes
// keep the status, which only the status subresource changes.
type strategy struct {
	store.WithStatus[*apisv1alpha1.APIExport]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewWithStatus(store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate), apisv1alpha1.SchemeGroupVersion, parts).AlsoServedAs(apisv1alpha2.SchemeGroupVersion)}
}

// parts returns the metadata, spec and status of an APIExport.
func parts(e *apisv1alpha1.APIExport) (*metav1.ObjectMeta, *apisv1alpha1.APIExportSpec, *apisv1alpha1.APIExportStatus) {
	return &e.ObjectMeta, &e.Spec, &e.Status
}

// validate validates a new export.
func validate(e *apisv1alpha1.APIExport) field.ErrorList {
	errs := validation.ValidateObjectMeta(&e.ObjectMeta, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&e.Spec, field.NewPath("spec"))...)
	return append(errs, validateV1alpha2(e)...)
}

// validateUpdate validates an update. The spec may change: new schemas
// and claims reach new bindings only.
func validateUpdate(e, old *apisv1alpha1.APIExport) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&e.Spec, field.NewPath("spec"))...)
	return append(errs, validateV1alpha2(e)...)
}

// validateSpec validates the spec of an export:
//   - each of latestResourceSchemas is a schema's name
//     (<prefix>.<plural>.<group>), listed once, and no two name schemas of
//     the same group and resource: a binding serves one schema per
//     resource (kcp's v1alpha2 keys its resources by name and group);
//   - identity.secretRef, when set, names a namespace and a name (stricter
//     than kcp, which accepts an empty reference and then fails to find
//     the secret);
//   - maximalPermissionPolicy, when set, has local (the oneOf of kcp's
//     schema);
//   - the permission claims are valid (ValidatePermissionClaims), and a
//     claim of a resource that is neither built in nor of apis.kcp.io
//     names an identity hash (kcp's APIExport admission).
func validateSpec(spec *apisv1alpha1.APIExportSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	resources := map[apisv1alpha1.GroupResource]string{}
	for i, name := range spec.LatestResourceSchemas {
		sp := p.Child("latestResourceSchemas").Index(i)
		if names.Has(name) {
			errs = append(errs, field.Duplicate(sp, name))
			continue
		}
		names.Insert(name)
		nameErrs := apiresourceschemas.ValidateName(name, sp)
		if len(nameErrs) > 0 {
			errs = append(errs, nameErrs...)
			continue
		}
		_, plural, group, _ := apiresourceschemas.SplitName(name)
		gr := apisv1alpha1.GroupResource{Group: group, Resource: plural}
		if other, ok := resources[gr]; ok {
			errs = append(errs, field.Invalid(sp, name, fmt.Sprintf("%s also serves %s: an export serves one schema per resource", other, schema.GroupResource{Group: group, Resource: plural})))
			continue
		}
		resources[gr] = name
	}
	if spec.Identity != nil && spec.Identity.SecretRef != nil {
		sp := p.Child("identity", "secretRef")
		if spec.Identity.SecretRef.Namespace == "" {
			errs = append(errs, field.Required(sp.Child("namespace"), ""))
		}
		if spec.Identity.SecretRef.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		}
	}
	if mpp := spec.MaximalPermissionPolicy; mpp != nil && mpp.Local == nil {
		errs = append(errs, field.Required(p.Child("maximalPermissionPolicy", "local"), "the only policy there is"))
	}
	errs = append(errs, ValidatePermissionClaims(spec.PermissionClaims, p.Child("permissionClaims"))...)
	for i, c := range spec.PermissionClaims {
		if c.IdentityHash == "" && c.Resource != "" && needsIdentityHash(c.GroupResource) {
			errs = append(errs, field.Invalid(p.Child("permissionClaims").Index(i).Child("identityHash"), "", "identityHash is required for API types that are not built-in"))
		}
	}
	return errs
}

// statusStrategy updates the status only.
type statusStrategy struct{ strategy }

// GetResetFields: a status write keeps the spec and the metadata.
func (s statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.StatusResetFields()
}

// PrepareForUpdate keeps the stored spec and metadata, except the managed
// fields the write changed.
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.PrepareForStatusUpdate(ctx, obj, old)
}

// ValidateUpdate validates the status: the identity hash, once set, does
// not change (kcp documents it so; its identity controller reports a
// secret of another identity in a condition and keeps the hash), and is
// a hex SHA-256; every virtual workspace has a URL.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	e, oldE := obj.(*apisv1alpha1.APIExport), old.(*apisv1alpha1.APIExport)
	errs := validation.ValidateObjectMetaUpdate(&e.ObjectMeta, &oldE.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	switch hash := e.Status.IdentityHash; {
	case oldE.Status.IdentityHash != "" && hash != oldE.Status.IdentityHash:
		errs = append(errs, field.Invalid(p.Child("identityHash"), hash, "field is immutable once set"))
	case hash != "":
		errs = append(errs, ValidateIdentityHash(hash, p.Child("identityHash"))...)
	}
	for i, vw := range e.Status.VirtualWorkspaces {
		if vw.URL == "" {
			errs = append(errs, field.Required(p.Child("virtualWorkspaces").Index(i).Child("url"), ""))
		}
	}
	return errs
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
