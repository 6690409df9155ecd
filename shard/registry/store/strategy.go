package store

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Scope says whether the objects of a resource live in namespaces.
type Scope bool

const (
	// ClusterScoped resources have no namespace.
	ClusterScoped Scope = false
	// Namespaced resources live in namespaces.
	Namespaced Scope = true
)

// Strategy is the create, update and delete strategy most built-in
// resources share, for objects of type T: it validates with the functions
// it is given and changes nothing else. There is no status to clear, no
// canonical form and no warning; PUT does not create objects, and an update
// without resourceVersion overwrites the object.
//
// The strategy of a resource embeds it and overrides the methods whose
// behaviour differs.
type Strategy[T runtime.Object] struct {
	runtime.ObjectTyper
	names.NameGenerator
	scope          Scope
	validate       func(obj T) field.ErrorList
	validateUpdate func(obj, old T) field.ErrorList
}

var _ rest.RESTCreateUpdateStrategy = Strategy[runtime.Object]{}

// NewStrategy returns the strategy of a resource of the given scope, typing
// objects with typer, generating names with a random suffix, and validating
// new objects with validate and updates with validateUpdate. A strategy
// that defines its own Validate and ValidateUpdate may pass nil for both.
func NewStrategy[T runtime.Object](typer runtime.ObjectTyper, scope Scope, validate func(obj T) field.ErrorList, validateUpdate func(obj, old T) field.ErrorList) Strategy[T] {
	return Strategy[T]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, scope: scope, validate: validate, validateUpdate: validateUpdate}
}

// NamespaceScoped is true for a Namespaced resource.
func (s Strategy[T]) NamespaceScoped() bool { return bool(s.scope) }

// PrepareForCreate does nothing: the object has no status to clear.
func (Strategy[T]) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: the object has no status to keep.
func (Strategy[T]) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new object.
func (s Strategy[T]) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return append(s.validate(obj.(T)), s.validateFinalizers(obj)...)
}

// WarningsOnCreate returns no warnings.
func (Strategy[T]) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (Strategy[T]) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: PUT does not create objects.
func (Strategy[T]) AllowCreateOnUpdate(context.Context) bool { return false }

// ValidateUpdate validates an update.
func (s Strategy[T]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return append(s.validateUpdate(obj.(T), old.(T)), s.validateFinalizers(obj)...)
}

// standardFinalizers are the finalizer names Kubernetes defines without a
// domain: the namespace controller's and the garbage collector's.
var standardFinalizers = map[string]bool{"kubernetes": true, metav1.FinalizerOrphanDependents: true, metav1.FinalizerDeleteDependents: true}

// coreMetaGroups are the groups whose objects Kubernetes validates with the
// core group's ObjectMeta validation, which refuses unqualified finalizer
// names that are not standard.
var coreMetaGroups = map[string]bool{"": true, "rbac.authorization.k8s.io": true, "flowcontrol.apiserver.k8s.io": true, "certificates.k8s.io": true}

// validateFinalizers adds Kubernetes' rule for the finalizers of its own
// kinds to apimachinery's ObjectMeta validation (ValidateFinalizerNames) in
// the groups whose validation uses the core group's ObjectMeta validation;
// the others (coordination, admissionregistration, kcp's kinds, ...) accept
// any qualified name. test/fidelity compares.
func (s Strategy[T]) validateFinalizers(obj runtime.Object) field.ErrorList {
	if s.ObjectTyper == nil {
		return nil
	}
	if kinds, _, err := s.ObjectKinds(obj); err != nil || len(kinds) == 0 || !coreMetaGroups[kinds[0].Group] {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return ValidateFinalizerNames(m.GetFinalizers())
}

// ValidateFinalizerNames refuses the finalizer names without "/" that are
// not standard ones (kubernetes, orphan, foregroundDeletion), on
// metadata.finalizers[i], as Kubernetes does for the kinds whose metadata
// it validates with the core group's rules. A strategy that validates
// without the Strategy's own check (events) calls it where Kubernetes does.
func ValidateFinalizerNames(finalizers []string) field.ErrorList {
	var errs field.ErrorList
	for i, f := range finalizers {
		if !strings.Contains(f, "/") && !standardFinalizers[f] {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "finalizers").Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// WarningsOnUpdate returns no warnings.
func (Strategy[T]) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowUnconditionalUpdate is true: an update without resourceVersion
// overwrites the object.
func (Strategy[T]) AllowUnconditionalUpdate(context.Context) bool { return true }

// ResetFields returns what the GetResetFields of a strategy returns: the
// fields of objects of version gv that writes through the strategy leave
// as stored. Each path names a field with dots, e.g. "status" or
// "status.certificate".
func ResetFields(gv schema.GroupVersion, paths ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	set := fieldpath.NewSet()
	for _, p := range paths {
		var elements []interface{}
		for _, name := range strings.Split(p, ".") {
			elements = append(elements, name)
		}
		set.Insert(fieldpath.MakePathOrDie(elements...))
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{fieldpath.APIVersion(gv.String()): set}
}
