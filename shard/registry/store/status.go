package store

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// WithStatus is the strategy of a resource of objects of type T with a
// spec and a status subresource, as kcp serves its CRDs: writes of the
// object keep the status and bump the generation when the spec changes;
// writes of the status (PrepareForStatusUpdate, StatusResetFields) keep
// the spec and the metadata.
//
// The strategy of a resource embeds it, and its status strategy embeds
// that and calls PrepareForStatusUpdate and StatusResetFields from its own
// PrepareForUpdate and GetResetFields. A strategy that changes more, e.g.
// converts an older form of a field, overrides PrepareForCreate or
// PrepareForUpdate and calls those of WithStatus.
type WithStatus[T runtime.Object] struct {
	Strategy[T]
	gv                                 schema.GroupVersion
	servedAs                           []schema.GroupVersion
	prepareCreate                      func(obj T)
	prepareUpdate, prepareStatusUpdate func(obj, old T)
}

// deepCopier is a pointer to a type with a generated DeepCopy.
type deepCopier[S any] interface {
	*S
	DeepCopy() *S
}

// NewWithStatus returns the strategy of a resource with a status
// subresource, built on s, whose objects have the version gv in server-side
// apply, and whose metadata, spec and status parts returns, e.g.
//
//	func(e *apisv1alpha1.APIExport) (*metav1.ObjectMeta, *apisv1alpha1.APIExportSpec, *apisv1alpha1.APIExportStatus) {
//		return &e.ObjectMeta, &e.Spec, &e.Status
//	}
func NewWithStatus[T runtime.Object, Spec, Status any, PSpec deepCopier[Spec], PStatus deepCopier[Status]](
	s Strategy[T], gv schema.GroupVersion, parts func(obj T) (*metav1.ObjectMeta, PSpec, PStatus)) WithStatus[T] {
	return WithStatus[T]{
		Strategy: s,
		gv:       gv,
		prepareCreate: func(obj T) {
			meta, _, status := parts(obj)
			var none Status
			*status = none
			meta.Generation = 1
		},
		prepareUpdate: func(obj, old T) {
			meta, spec, status := parts(obj)
			oldMeta, oldSpec, oldStatus := parts(old)
			*status = *oldStatus.DeepCopy()
			if !apiequality.Semantic.DeepEqual(*spec, *oldSpec) {
				meta.Generation = oldMeta.Generation + 1
			}
		},
		prepareStatusUpdate: func(obj, old T) {
			meta, spec, _ := parts(obj)
			oldMeta, oldSpec, _ := parts(old)
			managed := meta.ManagedFields
			*meta = *oldMeta.DeepCopy()
			meta.ManagedFields = managed
			*spec = *oldSpec.DeepCopy()
		},
	}
}

// AlsoServedAs returns s for a resource that is also served in the
// versions gvs (converted by the scheme), whose server-side apply must
// reset the same fields.
func (s WithStatus[T]) AlsoServedAs(gvs ...schema.GroupVersion) WithStatus[T] {
	s.servedAs = append(append([]schema.GroupVersion(nil), s.servedAs...), gvs...)
	return s
}

// resetFields returns the reset fields paths in every version served.
func (s WithStatus[T]) resetFields(paths ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	out := ResetFields(s.gv, paths...)
	for _, gv := range s.servedAs {
		for v, set := range ResetFields(gv, paths...) {
			out[v] = set
		}
	}
	return out
}

// GetResetFields: a write of the object keeps the status.
func (s WithStatus[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.resetFields("status")
}

// PrepareForCreate drops the status, which controllers fill in, and starts
// the generation at 1.
func (s WithStatus[T]) PrepareForCreate(_ context.Context, obj runtime.Object) {
	s.prepareCreate(obj.(T))
}

// PrepareForUpdate keeps the stored status, and bumps the generation when
// the spec changes.
func (s WithStatus[T]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s.prepareUpdate(obj.(T), old.(T))
}

// StatusResetFields is what the GetResetFields of the status strategy
// returns: a status write keeps the spec and the metadata, as that of a
// custom resource does.
func (s WithStatus[T]) StatusResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.resetFields("spec", "metadata")
}

// PrepareForStatusUpdate is what the PrepareForUpdate of the status
// strategy does: it keeps the stored spec and metadata, except the managed
// fields the write changed.
func (s WithStatus[T]) PrepareForStatusUpdate(_ context.Context, obj, old runtime.Object) {
	s.prepareStatusUpdate(obj.(T), old.(T))
}
