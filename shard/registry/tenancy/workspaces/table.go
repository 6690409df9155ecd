package workspaces

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints workspaces as NAME TYPE PHASE URL AGE.
func tableConvertor() printers.TableConvertor[*tenancyv1alpha1.Workspace] {
	return printers.TableConvertor[*tenancyv1alpha1.Workspace]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Type", Type: "string", Description: "Type of the workspace"},
			{Name: "Phase", Type: "string", Description: "The current phase (e.g. Scheduling, Initializing, Ready)"},
			{Name: "URL", Type: "string", Description: "URL to access the workspace"},
			printers.AgeColumn(),
		},
		Cells: func(ws *tenancyv1alpha1.Workspace) []interface{} {
			var typ string
			if ws.Spec.Type != nil {
				typ = string(ws.Spec.Type.Name)
			}
			return []interface{}{ws.Name, typ, string(ws.Status.Phase), ws.Spec.URL, printers.Age(ws.CreationTimestamp)}
		},
	}
}
