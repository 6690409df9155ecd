package flowcontrol

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// FlowSchemaTableConvertor prints FlowSchemas as kubectl does for
// Kubernetes: NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD
// AGE MISSINGPL.
func FlowSchemaTableConvertor() printers.TableConvertor[*flowcontrolv1.FlowSchema] {
	return printers.TableConvertor[*flowcontrolv1.FlowSchema]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
			{Name: "MatchingPrecedence", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]},
			{Name: "DistinguisherMethod", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]},
			printers.AgeColumn(),
			{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
		},
		Cells: func(fs *flowcontrolv1.FlowSchema) []interface{} {
			method := "<none>"
			if fs.Spec.DistinguisherMethod != nil {
				method = string(fs.Spec.DistinguisherMethod.Type)
			}
			missing := "?"
			for _, c := range fs.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
					missing = string(c.Status)
				}
			}
			return []interface{}{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, fmt.Sprint(fs.Spec.MatchingPrecedence), method, printers.Age(fs.CreationTimestamp), missing}
		},
	}
}

// PriorityLevelTableConvertor prints PriorityLevelConfigurations as
// NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE.
func PriorityLevelTableConvertor() printers.TableConvertor[*flowcontrolv1.PriorityLevelConfiguration] {
	return printers.TableConvertor[*flowcontrolv1.PriorityLevelConfiguration]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
			{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
			{Name: "Queues", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]},
			{Name: "HandSize", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]},
			{Name: "QueueLengthLimit", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]},
			printers.AgeColumn(),
		},
		Cells: func(pl *flowcontrolv1.PriorityLevelConfiguration) []interface{} {
			shares, queues, hand, length := "<none>", "<none>", "<none>", "<none>"
			if l := pl.Spec.Limited; l != nil {
				if l.NominalConcurrencyShares != nil {
					shares = fmt.Sprint(*l.NominalConcurrencyShares)
				}
				if q := l.LimitResponse.Queuing; q != nil {
					queues, hand, length = fmt.Sprint(q.Queues), fmt.Sprint(q.HandSize), fmt.Sprint(q.QueueLengthLimit)
				}
			}
			return []interface{}{pl.Name, string(pl.Spec.Type), shares, queues, hand, length, printers.Age(pl.CreationTimestamp)}
		},
	}
}
