package partitionsets

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints partition sets as NAME COUNT AGE, the printer
// columns of kcp's PartitionSet. COUNT is a string column there, with its
// own description; it is empty (nil) while status.count is 0, which the
// JSON omits.
func tableConvertor() printers.TableConvertor[*topologyv1alpha1.PartitionSet] {
	count := printers.CRDColumn("Count", "string", ".status.count")
	count.Description = "Count of the partitions belonging the PartitionSet"
	return printers.TableConvertor[*topologyv1alpha1.PartitionSet]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			count,
			printers.CRDColumn("Age", "date", ".metadata.creationTimestamp"),
		},
		Cells: func(s *topologyv1alpha1.PartitionSet) []interface{} {
			var n interface{}
			if s.Status.Count > 0 {
				n = strconv.FormatUint(uint64(s.Status.Count), 10)
			}
			return []interface{}{s.Name, n, printers.Age(s.CreationTimestamp)}
		},
	}
}
