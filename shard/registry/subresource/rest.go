// Package subresource serves the update-only subresources of built-in
// resources (status, approval): a copy of the resource's store whose update
// strategy decides which part of the object the subresource may change.
package subresource

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// REST serves get, update and patch of one subresource.
type REST struct {
	store *genericregistry.Store
}

var (
	_ rest.Getter              = &REST{}
	_ rest.Updater             = &REST{}
	_ rest.ResetFieldsStrategy = &REST{}
	_ rest.TableConvertor      = &REST{}
)

// Strategy is the update strategy of a subresource. Its reset fields are
// the fields of the object the subresource does not change.
type Strategy interface {
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}

// New returns the REST storage of a subresource of the resource whose
// completed store is store: a copy of store that updates objects through
// strategy, and shares the underlying storage with the resource.
func New(store *genericregistry.Store, strategy Strategy) *REST {
	sub := *store
	sub.UpdateStrategy = strategy
	sub.ResetFieldsStrategy = strategy
	return &REST{store: &sub}
}

// New returns an empty object of the resource.
func (r *REST) New() runtime.Object {
	return r.store.New()
}

// Destroy does nothing: the underlying storage belongs to the resource's
// main store, which destroys it.
func (r *REST) Destroy() {}

// Get returns the whole object; patch needs it.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update changes the part of the object the subresource owns. A subresource
// never creates its object.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields returns the fields the subresource's strategy resets, for
// server-side apply.
func (r *REST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints the object like the resource does.
func (r *REST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
