package apibindings

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints bindings as NAME AGE READY, the printer columns of
// kcp's APIBinding; READY is the status of the Ready condition.
func tableConvertor() printers.TableConvertor[*apisv1alpha1.APIBinding] {
	return printers.TableConvertor[*apisv1alpha1.APIBinding]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.CRDColumn("Age", "date", ".metadata.creationTimestamp"),
			printers.CRDColumn("Ready", "string", `.status.conditions[?(@.type=="Ready")].status`),
		},
		Cells: func(b *apisv1alpha1.APIBinding) []interface{} {
			return []interface{}{b.Name, printers.Age(b.CreationTimestamp), printers.ConditionStatus(b, conditionsv1alpha1.ReadyCondition)}
		},
	}
}
