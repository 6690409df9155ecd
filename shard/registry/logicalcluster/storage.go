package logicalcluster

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

// REST is the logicalclusters storage.
type REST struct {
	*genericregistry.Store
}

// ShortNames implements rest.ShortNamesProvider.
func (*REST) ShortNames() []string { return []string{"lc"} }

// Categories implements rest.CategoriesProvider.
func (*REST) Categories() []string { return []string{"kcp"} }

// StatusREST is the logicalclusters/status storage.
type StatusREST struct {
	store *genericregistry.Store
}

func (r *StatusREST) New() runtime.Object { return &corev1alpha1.LogicalCluster{} }
func (r *StatusREST) Destroy()            {}
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// NewStorage returns the storage of logicalclusters and logicalclusters/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := newStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1alpha1.LogicalCluster{} },
		NewListFunc:               func() runtime.Object { return &corev1alpha1.LogicalClusterList{} },
		PredicateFunc:             predicate,
		DefaultQualifiedResource:  corev1alpha1.Resource("logicalclusters"),
		SingularQualifiedResource: corev1alpha1.Resource("logicalcluster"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, fmt.Errorf("logicalclusters: %w", err)
	}
	status := *store
	status.UpdateStrategy = statusStrategy{s}
	status.ResetFieldsStrategy = statusStrategy{s}
	return map[string]rest.Storage{
		"logicalclusters":        &REST{store},
		"logicalclusters/status": &StatusREST{&status},
	}, nil
}

func predicate(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
