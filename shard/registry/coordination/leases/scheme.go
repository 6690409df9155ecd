// Package leases is the registry of coordination.k8s.io/v1 leases: scheme
// registration, strategy, validation, storage and table printing.
package leases

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers Lease and LeaseList as coordination.k8s.io/v1 kinds
// and as kinds of the group's internal version, and the field selector
// labels of Lease.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, coordinationv1.SchemeGroupVersion, &coordinationv1.Lease{}, &coordinationv1.LeaseList{})
	return store.AddFieldLabels(s, coordinationv1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion, "Lease")
}
