package informers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// StripManagedFields is a cache.TransformFunc that drops managedFields,
// which controllers do not read and which are often the larger part of an
// object in memory.
func StripManagedFields(obj any) (any, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		stripped, err := StripManagedFields(d.Obj)
		return cache.DeletedFinalStateUnknown{Key: d.Key, Obj: stripped}, err
	}
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
