package workspacetypes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints workspace types as NAME AGE.
func tableConvertor() printers.TableConvertor[*tenancyv1alpha1.WorkspaceType] {
	return printers.TableConvertor[*tenancyv1alpha1.WorkspaceType]{
		Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.AgeColumn()},
		Cells: func(t *tenancyv1alpha1.WorkspaceType) []interface{} {
			return []interface{}{t.Name, printers.Age(t.CreationTimestamp)}
		},
	}
}
