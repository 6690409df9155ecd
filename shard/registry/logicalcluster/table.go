package logicalcluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints logical clusters as NAME PHASE URL AGE.
func tableConvertor() printers.TableConvertor[*corev1alpha1.LogicalCluster] {
	return printers.TableConvertor[*corev1alpha1.LogicalCluster]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: "Name of the LogicalCluster (always cluster)"},
			{Name: "Phase", Type: "string", Description: "The current phase (e.g. Scheduling, Initializing, Ready)"},
			{Name: "URL", Type: "string", Description: "URL to access the logical cluster"},
			{Name: "Age", Type: "string", Description: "Time since creation"},
		},
		Cells: func(lc *corev1alpha1.LogicalCluster) []interface{} {
			return []interface{}{lc.Name, string(lc.Status.Phase), lc.Status.URL, printers.Age(lc.CreationTimestamp)}
		},
	}
}
