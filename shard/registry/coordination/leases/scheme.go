// Package leases is the registry of coordination.k8s.io/v1 leases: scheme
// registration, strategy, validation, storage and table printing.
package leases

import (
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers Lease and LeaseList as coordination.k8s.io/v1 kinds
// and as kinds of the group's internal version, and the field selector
// labels of Lease.
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: coordinationv1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{coordinationv1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &coordinationv1.Lease{}, &coordinationv1.LeaseList{})
	}
	if err := s.AddFieldLabelConversionFunc(coordinationv1.SchemeGroupVersion.WithKind("Lease"), runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
		return fmt.Errorf("registering Lease field labels: %w", err)
	}
	return nil
}
