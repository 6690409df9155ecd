package store

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// optionsGetter hands out RESTOptions whose decorator builds no storage and
// records the AttrFunc the store completed with.
type optionsGetter struct {
	err   error
	attrs storage.AttrFunc
}

func (g *optionsGetter) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	if g.err != nil {
		return generic.RESTOptions{}, g.err
	}
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: "configmaps",
		Decorator: func(_ *storagebackend.ConfigForResource, _ string, _ func(runtime.Object) (string, error), _, _ func() runtime.Object,
			attrs storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			g.attrs = attrs
			return nil, func() {}, nil
		},
	}, nil
}

// statusStrategy is a strategy with reset fields.
type statusStrategy struct{ Strategy[*corev1.ConfigMap] }

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return ResetFields(corev1.SchemeGroupVersion, "status")
}

func configMapOptions(strategy Strategy[*corev1.ConfigMap]) Options {
	return Options{
		Resource:       corev1.Resource("configmaps"),
		Singular:       "configmap",
		NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
		Strategy:       strategy,
		TableConvertor: rest.NewDefaultTableConvertor(corev1.Resource("configmaps")),
	}
}

func TestNewREST(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme(), Namespaced, validateName, validateNameUpdate)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"l": "v"}}}

	t.Run("plain", func(t *testing.T) {
		getter := &optionsGetter{}
		opts := configMapOptions(strategy)
		opts.ShortNames = []string{"cm"}
		r, err := NewREST(getter, opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.DefaultQualifiedResource != corev1.Resource("configmaps") || r.GetSingularName() != "configmap" {
			t.Errorf("resource %s, singular %s", r.DefaultQualifiedResource, r.GetSingularName())
		}
		if r.CreateStrategy == nil || r.UpdateStrategy == nil || r.DeleteStrategy == nil {
			t.Error("strategies not set")
		}
		if r.ResetFieldsStrategy != nil {
			t.Error("reset fields strategy set for a strategy without GetResetFields")
		}
		if !slices.Equal(r.ShortNames(), []string{"cm"}) || r.Categories() != nil {
			t.Errorf("short names %v, categories %v", r.ShortNames(), r.Categories())
		}
		// Without an AttrFunc, a namespaced resource selects on
		// metadata.name and metadata.namespace.
		_, fieldSet, err := getter.attrs(cm)
		if err != nil {
			t.Fatal(err)
		}
		if want := (fields.Set{"metadata.name": "a", "metadata.namespace": "ns"}); !maps.Equal(fieldSet, want) {
			t.Errorf("fields %v, want %v", fieldSet, want)
		}
	})

	t.Run("reset fields, attrs, customized", func(t *testing.T) {
		getter := &optionsGetter{}
		opts := configMapOptions(strategy)
		opts.Strategy = statusStrategy{strategy}
		opts.AttrFunc = func(obj runtime.Object) (labels.Set, fields.Set, error) {
			return Attrs(obj, func(cm *corev1.ConfigMap) fields.Set { return fields.Set{"data": "x"} })
		}
		opts.Categories = []string{"api-extensions"}
		opts.Customize = func(s *genericregistry.Store) { s.ReturnDeletedObject = true }
		r, err := NewREST(getter, opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.ResetFieldsStrategy == nil || r.GetResetFields()["v1"] == nil {
			t.Error("reset fields strategy not set")
		}
		if !r.ReturnDeletedObject {
			t.Error("Customize was not applied")
		}
		if !slices.Equal(r.Categories(), []string{"api-extensions"}) || r.ShortNames() != nil {
			t.Errorf("short names %v, categories %v", r.ShortNames(), r.Categories())
		}
		labelSet, fieldSet, err := getter.attrs(cm)
		if err != nil {
			t.Fatal(err)
		}
		if labelSet["l"] != "v" || !maps.Equal(fieldSet, fields.Set{"data": "x"}) {
			t.Errorf("labels %v, fields %v", labelSet, fieldSet)
		}
		if _, _, err := getter.attrs(&corev1.Secret{}); err == nil {
			t.Error("attributes of a secret: want an error")
		}
	})

	t.Run("error", func(t *testing.T) {
		_, err := New(&optionsGetter{err: errors.New("no etcd")}, configMapOptions(strategy))
		if err == nil || !strings.Contains(err.Error(), "completing configmaps storage: no etcd") {
			t.Errorf("error %v", err)
		}
	})
}
