package configmaps

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints configmaps as NAME DATA AGE; DATA counts the keys
// of data and binaryData.
func TableConvertor() printers.TableConvertor[*corev1.ConfigMap] {
	return printers.TableConvertor[*corev1.ConfigMap]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Data", Type: "integer", Description: "Number of keys in data and binaryData."},
			printers.AgeColumn(),
		},
		Cells: func(cm *corev1.ConfigMap) []interface{} {
			return []interface{}{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), printers.Age(cm.CreationTimestamp)}
		},
	}
}
