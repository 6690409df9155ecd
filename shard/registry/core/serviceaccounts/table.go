package serviceaccounts

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints service accounts as NAME SECRETS AGE.
func TableConvertor() printers.TableConvertor[*corev1.ServiceAccount] {
	return printers.TableConvertor[*corev1.ServiceAccount]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Secrets", Type: "integer", Description: corev1.ServiceAccount{}.SwaggerDoc()["secrets"]},
			printers.AgeColumn(),
		},
		Cells: func(sa *corev1.ServiceAccount) []interface{} {
			return []interface{}{sa.Name, int64(len(sa.Secrets)), printers.Age(sa.CreationTimestamp)}
		},
	}
}
