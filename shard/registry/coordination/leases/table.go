package leases

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints leases as NAME HOLDER AGE.
func TableConvertor() printers.TableConvertor[*coordinationv1.Lease] {
	return printers.TableConvertor[*coordinationv1.Lease]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
			printers.AgeColumn(),
		},
		Cells: func(lease *coordinationv1.Lease) []interface{} {
			holder := ""
			if lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			return []interface{}{lease.Name, holder, printers.Age(lease.CreationTimestamp)}
		},
	}
}
