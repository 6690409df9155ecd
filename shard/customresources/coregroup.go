package customresources

import (
	"context"
	"maps"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// CRDs of the core group (bound Services, Pods and Endpoints of kcp's
// compute export) are served at /api/v1 with apiVersion "v1". Upstream's
// custom resource validator wants an object's apiVersion, as its
// GroupVersion prints it, to be "<group>/<version>": "/v1" for the core
// group, which no object can have; it refuses every object before any
// other check. kcp patches the validator. Here a core group CRD version
// validates with a second strategy whose kind is in validationGroup, and
// the object it validates is a copy in that group; everything else is the
// strategy of the real kind.

// validationGroup is the group the validating strategy of a core group CRD
// has. Objects never have it: it is only in the copies validated.
const validationGroup = "core.validation.tessera.dev"

// coreStrategy is what the store needs of a custom resource strategy.
type coreStrategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}

// coreTypeMeta is a strategy of a core group CRD version.
type coreTypeMeta struct {
	coreStrategy
	// validating is the strategy of the kind in validationGroup.
	validating coreStrategy
}

// Validate validates obj as the validating strategy expects it.
func (s coreTypeMeta) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return s.validating.Validate(ctx, inValidationGroup(obj))
}

// ValidateUpdate validates obj as the validating strategy expects it.
func (s coreTypeMeta) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validating.ValidateUpdate(ctx, inValidationGroup(obj), old)
}

// inValidationGroup returns a shallow copy of a core object with its
// version in validationGroup; other objects unchanged. Validation does not
// modify the object, so the copy need not be deep.
func inValidationGroup(obj runtime.Object) runtime.Object {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || strings.Contains(u.GetAPIVersion(), "/") {
		return obj
	}
	c := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
	c.Object["apiVersion"] = validationGroup + "/" + u.GetAPIVersion()
	return c
}

// coreStrategies are the strategies of a core group CRD version: the
// resource's and its status's, each of the real kind and of the kind in
// validationGroup.
type coreStrategies struct {
	strategy, validating             coreStrategy
	statusStrategy, statusValidating coreStrategy
}

// useCoreTypeMeta makes the stores of a core group CRD version validate
// with coreTypeMeta, and returns its status endpoint (nil without the
// status subresource): upstream's StatusREST keeps its store private, so
// it is rebuilt as upstream's NewStorage builds it.
func useCoreTypeMeta(storage *customresource.CustomResourceStorage, s coreStrategies) rest.Patcher {
	main := storage.CustomResource.Store
	main.CreateStrategy = coreTypeMeta{coreStrategy: s.strategy, validating: s.validating}
	main.UpdateStrategy = coreTypeMeta{coreStrategy: s.strategy, validating: s.validating}
	if storage.Status == nil {
		return nil
	}
	statusStore := *main
	statusStore.CreateStrategy = nil
	statusStore.DeleteStrategy = nil
	statusStore.UpdateStrategy = coreTypeMeta{coreStrategy: s.statusStrategy, validating: s.statusValidating}
	statusStore.ResetFieldsStrategy = s.statusStrategy
	return &coreStatusREST{store: &statusStore}
}

// coreStatusREST is upstream's StatusREST over a store of its own.
type coreStatusREST struct {
	store *genericregistry.Store
}

var _ rest.Patcher = &coreStatusREST{}

func (r *coreStatusREST) New() runtime.Object { return r.store.New() }

// Destroy does nothing: the status store shares the main store's storage.
func (r *coreStatusREST) Destroy() {}

func (r *coreStatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update updates the status; it never creates.
func (r *coreStatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

func (r *coreStatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}
