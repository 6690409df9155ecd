package namespaces

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// REST is the storage of namespaces. It serves everything a generic store
// does except deleting collections, and deletes in two phases (see Delete).
type REST struct {
	store *genericregistry.Store
}

var (
	_ rest.Creater                      = &REST{}
	_ rest.Lister                       = &REST{}
	_ rest.Getter                       = &REST{}
	_ rest.Updater                      = &REST{}
	_ rest.GracefulDeleter              = &REST{}
	_ rest.Watcher                      = &REST{}
	_ rest.Scoper                       = &REST{}
	_ rest.TableConvertor               = &REST{}
	_ rest.ShortNamesProvider           = &REST{}
	_ rest.SingularNameProvider         = &REST{}
	_ rest.StorageVersionProvider       = &REST{}
	_ rest.ResetFieldsStrategy          = &REST{}
	_ rest.StorageWithReadiness         = &REST{}
	_ rest.CorruptObjectDeleterProvider = &REST{}
)

// FinalizeREST serves the finalize subresource: updates of spec.finalizers.
// Like Kubernetes it supports PUT only.
type FinalizeREST struct {
	sub *subresource.REST
}

var (
	_ rest.Updater             = &FinalizeREST{}
	_ rest.ResetFieldsStrategy = &FinalizeREST{}
)

// NewREST returns the storage of namespaces and of their status and
// finalize subresources, persisted through optsGetter.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, *subresource.REST, *FinalizeREST, error) {
	strategy := NewStrategy(scheme)
	namespaces, err := store.New(optsGetter, store.Options{
		Resource:       corev1.Resource("namespaces"),
		Singular:       "namespace",
		NewFunc:        func() runtime.Object { return &corev1.Namespace{} },
		NewListFunc:    func() runtime.Object { return &corev1.NamespaceList{} },
		Strategy:       strategy,
		TableConvertor: TableConvertor(),
		AttrFunc:       GetAttrs,
		Customize: func(s *genericregistry.Store) {
			s.ReturnDeletedObject = true
			s.ShouldDeleteDuringUpdate = shouldDeleteDuringUpdate
		},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &REST{store: namespaces},
		subresource.New(namespaces, StatusStrategy{strategy}),
		&FinalizeREST{sub: subresource.New(namespaces, FinalizeStrategy{strategy})},
		nil
}

// shouldDeleteDuringUpdate removes a namespace being deleted once an update
// leaves both its metadata.finalizers and its spec.finalizers empty.
func shouldDeleteDuringUpdate(ctx context.Context, key string, obj, existing runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return false
	}
	return len(ns.Spec.Finalizers) == 0 && genericregistry.ShouldDeleteDuringUpdate(ctx, key, obj, existing)
}

// New returns an empty namespace.
func (r *REST) New() runtime.Object { return r.store.New() }

// NewList returns an empty namespace list.
func (r *REST) NewList() runtime.Object { return r.store.NewList() }

// Destroy releases the storage.
func (r *REST) Destroy() { r.store.Destroy() }

// NamespaceScoped is false: namespaces are cluster-scoped.
func (r *REST) NamespaceScoped() bool { return r.store.NamespaceScoped() }

// GetSingularName returns "namespace".
func (r *REST) GetSingularName() string { return r.store.GetSingularName() }

// ShortNames returns the short name of namespaces: ns.
func (r *REST) ShortNames() []string { return []string{"ns"} }

// StorageVersion returns the version namespaces are stored in.
func (r *REST) StorageVersion() runtime.GroupVersioner { return r.store.StorageVersion() }

// GetResetFields returns the fields writes to namespaces reset.
func (r *REST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ReadinessCheck reports whether the storage is ready.
func (r *REST) ReadinessCheck() error { return r.store.ReadinessCheck() }

// GetCorruptObjDeleter returns the deleter of objects that cannot be decoded.
func (r *REST) GetCorruptObjDeleter() rest.GracefulDeleter { return r.store.GetCorruptObjDeleter() }

// List lists namespaces.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	return r.store.List(ctx, options)
}

// Get returns one namespace.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Watch watches namespaces.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return r.store.Watch(ctx, options)
}

// Create creates a namespace.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return r.store.Create(ctx, obj, createValidation, options)
}

// Update updates a namespace.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// ConvertToTable prints namespaces.
func (r *REST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// New returns an empty namespace.
func (r *FinalizeREST) New() runtime.Object { return r.sub.New() }

// Destroy does nothing: the storage belongs to the namespaces' REST.
func (r *FinalizeREST) Destroy() {}

// Update changes spec.finalizers of a namespace; it never creates one.
func (r *FinalizeREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.sub.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// GetResetFields returns the fields finalize writes reset.
func (r *FinalizeREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.sub.GetResetFields()
}
