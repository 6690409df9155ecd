package apiexports

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints exports as NAME AGE READY, the printer columns of
// kcp's APIExport v1alpha1; READY is the status of the
// VirtualWorkspaceURLsReady condition.
func tableConvertor() printers.TableConvertor[*apisv1alpha1.APIExport] {
	return printers.TableConvertor[*apisv1alpha1.APIExport]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.CRDColumn("Age", "date", ".metadata.creationTimestamp"),
			printers.CRDColumn("Ready", "string", `.status.conditions[?(@.type=="VirtualWorkspaceURLsReady")].status`),
		},
		Cells: func(e *apisv1alpha1.APIExport) []interface{} {
			return []interface{}{e.Name, printers.Age(e.CreationTimestamp), printers.ConditionStatus(e, apisv1alpha1.APIExportVirtualWorkspaceURLsReady)}
		},
	}
}
