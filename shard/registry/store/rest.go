// Package store holds what the registries of the built-in resources share:
// the construction of their genericregistry.Store (Options, New, NewREST)
// and its selectable fields (Attrs); the REST storage that adds short names
// and categories for discovery (REST); the base create, update and delete
// strategy their strategies embed (Strategy) and their reset fields
// (ResetFields); and the registration of k8s.io/api types in a scheme as
// both their external and their group's internal version, with their
// defaulting and field selector labels (AddKnownTypes, AddDefaulting,
// AddFieldLabels).
package store

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
)

// Options describes the store of one resource.
type Options struct {
	// Resource is the plural resource, e.g. corev1.Resource("configmaps").
	Resource schema.GroupResource
	// Singular is the singular name of the resource, e.g. "configmap".
	Singular string
	// NewFunc returns an empty object, NewListFunc an empty list.
	NewFunc, NewListFunc func() runtime.Object
	// Strategy is the create, update and delete strategy of the resource;
	// when it implements rest.ResetFieldsStrategy, it is also the reset
	// fields strategy.
	Strategy rest.RESTCreateUpdateStrategy
	// TableConvertor prints the objects for kubectl get.
	TableConvertor rest.TableConvertor
	// AttrFunc returns the labels and selectable fields of an object. When
	// nil, the selectable fields are metadata.name, and metadata.namespace
	// for a namespaced resource.
	AttrFunc storage.AttrFunc
	// ShortNames and Categories are the short names and categories
	// discovery lists for the resource, e.g. "cm" and "api-extensions".
	// Only NewREST uses them.
	ShortNames, Categories []string
	// Customize, when set, changes the store before it is completed, to set
	// what few resources need: a TTL, deletion during update.
	Customize func(*genericregistry.Store)
}

// New returns the completed store of the resource opts describes,
// persisted through optsGetter.
func New(optsGetter generic.RESTOptionsGetter, opts Options) (*genericregistry.Store, error) {
	s := &genericregistry.Store{
		NewFunc:                   opts.NewFunc,
		NewListFunc:               opts.NewListFunc,
		DefaultQualifiedResource:  opts.Resource,
		SingularQualifiedResource: schema.GroupResource{Group: opts.Resource.Group, Resource: opts.Singular},
		CreateStrategy:            opts.Strategy,
		UpdateStrategy:            opts.Strategy,
		DeleteStrategy:            opts.Strategy,
		TableConvertor:            opts.TableConvertor,
	}
	if reset, ok := opts.Strategy.(rest.ResetFieldsStrategy); ok {
		s.ResetFieldsStrategy = reset
	}
	if opts.Customize != nil {
		opts.Customize(s)
	}
	if err := s.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: opts.AttrFunc}); err != nil {
		return nil, fmt.Errorf("completing %s storage: %w", opts.Resource, err)
	}
	return s, nil
}

// REST is the storage of a resource: its generic store, with the short
// names and categories discovery lists for it.
type REST struct {
	*genericregistry.Store
	shortNames, categories []string
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage of the resource opts describes, persisted
// through optsGetter.
func NewREST(optsGetter generic.RESTOptionsGetter, opts Options) (*REST, error) {
	s, err := New(optsGetter, opts)
	if err != nil {
		return nil, err
	}
	return &REST{Store: s, shortNames: slices.Clone(opts.ShortNames), categories: slices.Clone(opts.Categories)}, nil
}

// ShortNames returns the short names of the resource, e.g. "cm"; none for
// most.
func (r *REST) ShortNames() []string { return slices.Clone(r.shortNames) }

// Categories returns the categories of the resource, e.g. "api-extensions"
// so that `kubectl get api-extensions` lists it; none for most.
func (r *REST) Categories() []string { return slices.Clone(r.categories) }

// Attrs returns the labels of obj, an object of type T, and the fields of
// it that selectable says a field selector can match. It is the body of the
// AttrFunc of a resource with selectable fields beyond metadata.name and
// metadata.namespace.
func Attrs[T interface {
	runtime.Object
	metav1.Object
}](obj runtime.Object, selectable func(T) fields.Set) (labels.Set, fields.Set, error) {
	o, ok := obj.(T)
	if !ok {
		var want T
		return nil, nil, fmt.Errorf("%T is not a %T", obj, want)
	}
	return o.GetLabels(), selectable(o), nil
}
