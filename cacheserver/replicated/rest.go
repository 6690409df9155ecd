package replicated

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1validation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	"k8s.io/apiserver/pkg/util/dryrun"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	shardstorage "github.com/tessera-dev/tessera/shard/storage"
)

// clusterField is a field of the selection predicate that only the storage
// sets: the logical cluster (kcp.io/cluster) of a replica, for requests to
// shard "*" and one cluster. Clients cannot select on it
// (converter.ConvertFieldLabel refuses it).
const clusterField = "cache.kcp.io/cluster"

// REST is the storage of one replicated resource for every shard and
// logical cluster: the generic registry store for reads (get, list, watch
// with resourceVersion semantics, selectors, pagination) and writes that
// store the object as written, directly on the store's etcd3 storage.
type REST struct {
	*genericregistry.Store
	resource Resource
}

var (
	_ rest.Getter               = &REST{}
	_ rest.Lister               = &REST{}
	_ rest.Watcher              = &REST{}
	_ rest.Creater              = &REST{}
	_ rest.Updater              = &REST{}
	_ rest.GracefulDeleter      = &REST{}
	_ rest.CollectionDeleter    = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST builds the storage of r. optsGetter must return options whose
// ResourcePrefix is the resource's prefix below the storage prefix (see
// RESTOptionsGetter).
func NewREST(r Resource, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	gr := r.GroupResource()
	gvk := r.GroupVersionKind()
	prefix := shardstorage.ResourcePrefix(gr)
	s := &REST{resource: r}
	strategy := strategy{typer: crdserverscheme.NewUnstructuredObjectTyper()}
	s.Store = &genericregistry.Store{
		NewFunc: func() runtime.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		NewListFunc: func() runtime.Object {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(r.GroupVersion().WithKind(r.Kind + "List"))
			return l
		},
		DefaultQualifiedResource:  gr,
		SingularQualifiedResource: schema.GroupResource{Group: r.Group, Resource: r.Singular},
		KeyRootFunc: func(ctx context.Context) string {
			return keyRoot(ctx, prefix)
		},
		KeyFunc: func(ctx context.Context, name string) (string, error) {
			return key(ctx, prefix, gr, name)
		},
		PredicateFunc: func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: attrs}
		},
		CreateStrategy: strategy,
		UpdateStrategy: strategy,
		DeleteStrategy: strategy,
		TableConvertor: rest.NewDefaultTableConvertor(gr),
	}
	if err := s.Store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: attrs}); err != nil {
		return nil, fmt.Errorf("building the storage of %s: %w", gr, err)
	}
	return s, nil
}

// Resource returns the resource this storage serves.
func (s *REST) Resource() Resource { return s.resource }

// keyRoot is the key prefix a list or watch reads: the resource's, the
// shard's, or the shard's and cluster's. For shard "*" and one cluster it
// is the resource's, filtered by scopedOptions.
func keyRoot(ctx context.Context, prefix string) string {
	s, ok := ScopeFrom(ctx)
	switch {
	case !ok:
		// Unreachable through the handler; a prefix no shard can have.
		return prefix + "/-"
	case s.Shard == Wildcard:
		return prefix
	case s.Cluster == Wildcard:
		return prefix + "/" + s.Shard
	default:
		return prefix + "/" + s.Shard + "/" + string(s.Cluster)
	}
}

// key is the key of one replica; only a concrete shard and cluster have
// one.
func key(ctx context.Context, prefix string, gr schema.GroupResource, name string) (string, error) {
	s, ok := ScopeFrom(ctx)
	if !ok {
		return "", apierrors.NewInternalError(fmt.Errorf("no shard and cluster in the request context"))
	}
	if s.Wildcard() {
		return "", WildcardRefusal(gr, s, "")
	}
	if msgs := path.IsValidPathSegmentName(name); len(msgs) > 0 {
		return "", apierrors.NewBadRequest(fmt.Sprintf("invalid name %q: %v", name, msgs))
	}
	return prefix + "/" + s.Shard + "/" + string(s.Cluster) + "/" + name, nil
}

// WildcardRefusal is the error of a request for one object, or a write, to
// shard or cluster "*": 405 MethodNotAllowed.
func WildcardRefusal(gr schema.GroupResource, s Scope, verb string) error {
	what := "this request"
	if verb != "" {
		what = verb
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    405,
		Reason:  metav1.StatusReasonMethodNotAllowed,
		Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource},
		Message: fmt.Sprintf("%s is not allowed on %s across shards or logical clusters (%s): only list and watch are; name one shard and one logical cluster", what, gr, s),
	}}
}

// attrs are the labels and fields a selector can use: metadata.name, and
// the replica's cluster for scopedOptions.
func attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return m.GetLabels(), fields.Set{
		"metadata.name":      m.GetName(),
		"metadata.namespace": "",
		clusterField:         m.GetAnnotations()[logicalcluster.AnnotationKey],
	}, nil
}

// scopedOptions narrows a list or watch of shard "*" and one cluster to
// that cluster's replicas.
func scopedOptions(ctx context.Context, options *metainternalversion.ListOptions) *metainternalversion.ListOptions {
	s, ok := ScopeFrom(ctx)
	if !ok || s.Shard != Wildcard || s.Cluster == Wildcard {
		return options
	}
	out := &metainternalversion.ListOptions{}
	if options != nil {
		*out = *options
	}
	cluster := fields.OneTermEqualSelector(clusterField, string(s.Cluster))
	if out.FieldSelector == nil || out.FieldSelector.Empty() {
		out.FieldSelector = cluster
	} else {
		out.FieldSelector = fields.AndSelectors(out.FieldSelector, cluster)
	}
	return out
}

// List implements rest.Lister.
func (s *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	return s.Store.List(ctx, scopedOptions(ctx, options))
}

// Watch implements rest.Watcher.
func (s *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return s.Store.Watch(ctx, scopedOptions(ctx, options))
}

// Create stores obj as written, but for its resourceVersion.
func (s *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	u, err := s.prepare(ctx, obj, "")
	if err != nil {
		return nil, err
	}
	k, err := s.KeyFunc(ctx, u.GetName())
	if err != nil {
		return nil, err
	}
	if createValidation != nil {
		if err := createValidation(ctx, u.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	out := s.NewFunc()
	if err := s.Storage.Create(ctx, k, u, out, 0, options != nil && dryrun.IsDryRun(options.DryRun)); err != nil {
		return nil, storeerr.InterpretCreateError(err, s.DefaultQualifiedResource, u.GetName())
	}
	return out, nil
}

// Update replaces the replica with the object as written, but for its
// resourceVersion: an update that names a resourceVersion other than the
// stored one is a conflict, one without a resourceVersion is
// unconditional. A missing replica is not created.
func (s *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	k, err := s.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	gr := s.DefaultQualifiedResource
	out := s.NewFunc()
	err = s.Storage.GuaranteedUpdate(ctx, k, out, false, nil, func(existing runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		obj, err := objInfo.UpdatedObject(ctx, existing)
		if err != nil {
			return nil, nil, err
		}
		newMeta, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		oldMeta, err := meta.Accessor(existing)
		if err != nil {
			return nil, nil, err
		}
		if rv := newMeta.GetResourceVersion(); rv != "" && rv != oldMeta.GetResourceVersion() {
			return nil, nil, apierrors.NewConflict(gr, name, fmt.Errorf("%s", genericregistry.OptimisticLockErrorMsg))
		}
		u, err := s.prepare(ctx, obj, name)
		if err != nil {
			return nil, nil, err
		}
		if updateValidation != nil {
			if err := updateValidation(ctx, u.DeepCopyObject(), existing.DeepCopyObject()); err != nil {
				return nil, nil, err
			}
		}
		return u, nil, nil
	}, options != nil && dryrun.IsDryRun(options.DryRun), nil)
	if err != nil {
		return nil, false, storeerr.InterpretUpdateError(err, gr, name)
	}
	return out, false, nil
}

// Delete removes the replica at once, whatever its finalizers; the
// options' preconditions apply.
func (s *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	k, err := s.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	gr := s.DefaultQualifiedResource
	var preconditions *storage.Preconditions
	if options != nil && options.Preconditions != nil {
		preconditions = &storage.Preconditions{UID: options.Preconditions.UID, ResourceVersion: options.Preconditions.ResourceVersion}
	}
	validate := func(ctx context.Context, obj runtime.Object) error {
		if deleteValidation != nil {
			return deleteValidation(ctx, obj)
		}
		return nil
	}
	out := s.NewFunc()
	dryRun := options != nil && dryrun.IsDryRun(options.DryRun)
	if err := s.Storage.Delete(ctx, k, out, preconditions, validate, dryRun, nil, storage.DeleteOptions{}); err != nil {
		return nil, false, storeerr.InterpretDeleteError(err, gr, name)
	}
	return out, true, nil
}

// DeleteCollection deletes the replicas of one shard and cluster that the
// list options select, and returns them.
func (s *REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if sc, ok := ScopeFrom(ctx); !ok || sc.Wildcard() {
		return nil, WildcardRefusal(s.DefaultQualifiedResource, sc, "deletecollection")
	}
	if listOptions == nil {
		listOptions = &metainternalversion.ListOptions{}
	} else {
		listOptions = listOptions.DeepCopy()
	}
	listObj, err := s.Store.List(ctx, listOptions)
	if err != nil {
		return nil, err
	}
	list, ok := listObj.(*unstructured.UnstructuredList)
	if !ok {
		return nil, fmt.Errorf("listing %s returned a %T", s.DefaultQualifiedResource, listObj)
	}
	deleted := list.Items[:0]
	for i := range list.Items {
		obj, _, err := s.Delete(ctx, list.Items[i].GetName(), deleteValidation, options)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		deleted = append(deleted, *obj.(*unstructured.Unstructured))
	}
	list.Items = deleted
	return list, nil
}

// prepare checks what a write brings: a replica of this resource (kind and
// apiVersion of the URL) with valid metadata, named name when name is set.
// It clears the resourceVersion and namespace, and stamps the scope's
// cluster and shard as annotations; an object that names another cluster
// or shard is refused.
func (s *REST) prepare(ctx context.Context, obj runtime.Object, name string) (*unstructured.Unstructured, error) {
	gr, gvk := s.DefaultQualifiedResource, s.resource.GroupVersionKind()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected a %s, got a %T", gvk.Kind, obj))
	}
	if got := u.GroupVersionKind(); got != gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object is a %s of %s, but %s serves %s of %s only", got.Kind, got.GroupVersion(), gr, gvk.Kind, gvk.GroupVersion()))
	}
	sc, ok := ScopeFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no shard and cluster in the request context"))
	}
	if sc.Wildcard() {
		return nil, WildcardRefusal(gr, sc, "")
	}
	if name != "" && u.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", u.GetName(), name))
	}
	u.SetNamespace("")
	u.SetResourceVersion("")
	u.SetSelfLink("")
	annotations := u.GetAnnotations()
	for _, a := range []struct{ key, want string }{
		{logicalcluster.AnnotationKey, string(sc.Cluster)},
		{ShardAnnotationKey, sc.Shard},
	} {
		if got, ok := annotations[a.key]; ok && got != a.want {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("annotation %s=%q of the object does not match the URL's %s", a.key, got, sc))
		}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[logicalcluster.AnnotationKey] = string(sc.Cluster)
	annotations[ShardAnnotationKey] = sc.Shard
	u.SetAnnotations(annotations)
	if u.GetName() == "" {
		return nil, apierrors.NewInvalid(gvk.GroupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "a replica has the name its shard gave it")})
	}
	if errs := metav1validation.ValidateObjectMetaAccessor(u, false, path.ValidatePathSegmentName, field.NewPath("metadata")); len(errs) > 0 {
		return nil, apierrors.NewInvalid(gvk.GroupKind(), u.GetName(), errs)
	}
	return u, nil
}
