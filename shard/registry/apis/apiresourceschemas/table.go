package apiresourceschemas

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints schemas as NAME AGE.
func tableConvertor() printers.TableConvertor[*apisv1alpha1.APIResourceSchema] {
	return printers.TableConvertor[*apisv1alpha1.APIResourceSchema]{
		Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.AgeColumn()},
		Cells: func(s *apisv1alpha1.APIResourceSchema) []interface{} {
			return []interface{}{s.Name, printers.Age(s.CreationTimestamp)}
		},
	}
}
