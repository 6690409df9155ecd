package apiexportendpointslices

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints slices as NAME EXPORT PARTITION AGE, the printer
// columns of kcp's APIExportEndpointSlice; PARTITION is empty (nil)
// without a partition.
func tableConvertor() printers.TableConvertor[*apisv1alpha1.APIExportEndpointSlice] {
	return printers.TableConvertor[*apisv1alpha1.APIExportEndpointSlice]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.CRDColumn("Export", "string", ".spec.export.name"),
			printers.CRDColumn("Partition", "string", ".spec.partition"),
			printers.CRDColumn("Age", "date", ".metadata.creationTimestamp"),
		},
		Cells: func(s *apisv1alpha1.APIExportEndpointSlice) []interface{} {
			var partition interface{}
			if s.Spec.Partition != "" {
				partition = s.Spec.Partition
			}
			return []interface{}{s.Name, s.Spec.APIExport.Name, partition, printers.Age(s.CreationTimestamp)}
		},
	}
}
