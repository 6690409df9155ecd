package store

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddKnownTypes registers types as kinds of gv and of the internal version
// of gv's group. The k8s.io/api types have no internal form of their own,
// so the API server's conversions between the two versions are plain
// copies.
func AddKnownTypes(s *runtime.Scheme, gv schema.GroupVersion, types ...runtime.Object) {
	s.AddKnownTypes(gv, types...)
	s.AddKnownTypes(schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}, types...)
}

// AddDefaulting registers setDefaults as the defaulting function of objects
// of type *T and of every item of lists of type *L, whose items items
// returns.
func AddDefaulting[T, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}](s *runtime.Scheme, setDefaults func(*T), items func(*L) []T) {
	s.AddTypeDefaultingFunc(PT(new(T)), func(obj interface{}) { setDefaults(obj.(*T)) })
	s.AddTypeDefaultingFunc(PL(new(L)), func(obj interface{}) {
		list := items(obj.(*L))
		for i := range list {
			setDefaults(&list[i])
		}
	})
}

// AddFieldLabels registers convert as the conversion of the field selector
// labels of each of kinds in version gv.
func AddFieldLabels(s *runtime.Scheme, gv schema.GroupVersion, convert runtime.FieldLabelConversionFunc, kinds ...string) error {
	for _, kind := range kinds {
		if err := s.AddFieldLabelConversionFunc(gv.WithKind(kind), convert); err != nil {
			return fmt.Errorf("registering the field labels of %s: %w", gv.WithKind(kind), err)
		}
	}
	return nil
}
