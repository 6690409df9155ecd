package resourcequotas

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints resource quotas as NAME AGE REQUEST LIMIT. REQUEST
// and LIMIT list "resource: used/hard" for each resource of status.hard,
// LIMIT those named limits.*.
func TableConvertor() printers.TableConvertor[*corev1.ResourceQuota] {
	return printers.TableConvertor[*corev1.ResourceQuota]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.AgeColumn(),
			{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
			{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		},
		Cells: func(rq *corev1.ResourceQuota) []interface{} {
			names := make([]string, 0, len(rq.Status.Hard))
			for name := range rq.Status.Hard {
				names = append(names, string(name))
			}
			sort.Strings(names)
			var requests, limits []string
			for _, name := range names {
				used := rq.Status.Used[corev1.ResourceName(name)]
				hard := rq.Status.Hard[corev1.ResourceName(name)]
				entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
				if strings.HasPrefix(name, "limits.") {
					limits = append(limits, entry)
				} else {
					requests = append(requests, entry)
				}
			}
			return []interface{}{rq.Name, printers.Age(rq.CreationTimestamp), strings.Join(requests, ", "), strings.Join(limits, ", ")}
		},
	}
}
