package partitions

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints partitions as NAME OWNER AGE, the printer columns
// of kcp's Partition. OWNER is the name of the first owner reference, as
// the API server prints .metadata.ownerReferences[*].name for a CRD, and
// empty (nil) without one.
func tableConvertor() printers.TableConvertor[*topologyv1alpha1.Partition] {
	return printers.TableConvertor[*topologyv1alpha1.Partition]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.CRDColumn("Owner", "string", ".metadata.ownerReferences[*].name"),
			printers.CRDColumn("Age", "date", ".metadata.creationTimestamp"),
		},
		Cells: func(p *topologyv1alpha1.Partition) []interface{} {
			var owner interface{}
			if len(p.OwnerReferences) > 0 {
				owner = p.OwnerReferences[0].Name
			}
			return []interface{}{p.Name, owner, printers.Age(p.CreationTimestamp)}
		},
	}
}
