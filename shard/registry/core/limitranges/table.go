package limitranges

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints limit ranges as NAME CREATED AT.
func TableConvertor() printers.TableConvertor[*corev1.LimitRange] {
	return printers.TableConvertor[*corev1.LimitRange]{
		Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.CreatedAtColumn()},
		Cells: func(lr *corev1.LimitRange) []interface{} {
			return []interface{}{lr.Name, printers.CreatedAt(lr.CreationTimestamp)}
		},
	}
}
