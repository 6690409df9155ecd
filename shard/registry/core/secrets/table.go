package secrets

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints secrets as NAME TYPE DATA AGE.
func TableConvertor() printers.TableConvertor[*corev1.Secret] {
	return printers.TableConvertor[*corev1.Secret]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
			{Name: "Data", Type: "integer", Description: "Number of keys in data."},
			printers.AgeColumn(),
		},
		Cells: func(secret *corev1.Secret) []interface{} {
			return []interface{}{secret.Name, string(secret.Type), int64(len(secret.Data)), printers.Age(secret.CreationTimestamp)}
		},
	}
}
