package shards

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// tableConvertor prints shards as NAME REGION URL EXTERNAL-URL AGE.
func tableConvertor() printers.TableConvertor[*corev1alpha1.Shard] {
	return printers.TableConvertor[*corev1alpha1.Shard]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Region", Type: "string", Description: "The region this shard is in"},
			{Name: "URL", Type: "string", Description: "URL to directly connect to the shard"},
			{Name: "External URL", Type: "string", Description: "The URL exposed in logical clusters created on that shard"},
			printers.AgeColumn(),
		},
		Cells: func(s *corev1alpha1.Shard) []interface{} {
			return []interface{}{s.Name, s.Labels[corev1alpha1.ShardRegionLabelKey], s.Spec.BaseURL, s.Spec.ExternalURL, printers.Age(s.CreationTimestamp)}
		},
	}
}
