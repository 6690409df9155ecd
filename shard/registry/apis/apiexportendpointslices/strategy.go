// Package apiexportendpointslices serves apis.kcp.io/v1alpha1
// APIExportEndpointSlices: the URLs at which the apiexport virtual
// workspace serves an export, on every shard or on those of a partition.
//
// Like kcp, which serves them as CRDs with a status subresource, writes of
// the slice keep the status and bump the generation when the spec
// changes, and writes of the status keep everything else. The export a
// slice names cannot change. Whether the user may bind to the export is
// the business of the APIExportEndpointSlice admission, not of this
// storage.
package apiexportendpointslices

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/apis/apiexports"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// strategy is the create, update and delete strategy of slices. Writes
// keep the status, which only the status subresource changes.
type strategy struct {
	store.WithStatus[*apisv1alpha1.APIExportEndpointSlice]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewWithStatus(store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate), apisv1alpha1.SchemeGroupVersion, parts)}
}

// parts returns the metadata, spec and status of an APIExportEndpointSlice.
func parts(s *apisv1alpha1.APIExportEndpointSlice) (*metav1.ObjectMeta, *apisv1alpha1.APIExportEndpointSliceSpec, *apisv1alpha1.APIExportEndpointSliceStatus) {
	return &s.ObjectMeta, &s.Spec, &s.Status
}

// validate validates a new slice.
func validate(s *apisv1alpha1.APIExportEndpointSlice) field.ErrorList {
	errs := validation.ValidateObjectMeta(&s.ObjectMeta, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateUpdate validates an update: the export cannot change, the
// partition can.
func validateUpdate(s, old *apisv1alpha1.APIExportEndpointSlice) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
	if s.Spec.APIExport != old.Spec.APIExport {
		errs = append(errs, field.Invalid(field.NewPath("spec", "export"), "object", apiexports.ReferenceImmutable))
	}
	return errs
}

// validateSpec validates the spec of a slice: it names an export
// (apiexports.ValidateReference), and a partition, when set, by a name a
// Partition can have, a DNS subdomain.
func validateSpec(spec *apisv1alpha1.APIExportEndpointSliceSpec, p *field.Path) field.ErrorList {
	errs := apiexports.ValidateReference(spec.APIExport, p.Child("export"))
	if spec.Partition != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(spec.Partition); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("partition"), spec.Partition, strings.Join(msgs, ", ")))
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

// ValidateUpdate validates the status: every endpoint has a URL, listed
// once (the key of the list).
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*apisv1alpha1.APIExportEndpointSlice), old.(*apisv1alpha1.APIExportEndpointSlice)
	errs := validation.ValidateObjectMetaUpdate(&s.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
	seen := sets.New[string]()
	for i, e := range s.Status.APIExportEndpoints {
		ep := field.NewPath("status", "endpoints").Index(i)
		switch {
		case e.URL == "":
			errs = append(errs, field.Required(ep.Child("url"), ""))
		case seen.Has(e.URL):
			errs = append(errs, field.Duplicate(ep, map[string]interface{}{"url": e.URL}))
		}
		seen.Insert(e.URL)
	}
	return errs
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
