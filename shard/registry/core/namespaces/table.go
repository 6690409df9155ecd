package namespaces

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints namespaces as NAME STATUS AGE.
func TableConvertor() printers.TableConvertor[*corev1.Namespace] {
	return printers.TableConvertor[*corev1.Namespace]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Status", Type: "string", Description: "The status of the namespace"},
			printers.AgeColumn(),
		},
		Cells: func(ns *corev1.Namespace) []interface{} {
			return []interface{}{ns.Name, string(ns.Status.Phase), printers.Age(ns.CreationTimestamp)}
		},
	}
}
