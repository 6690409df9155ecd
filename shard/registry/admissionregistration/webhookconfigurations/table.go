package webhookconfigurations

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

func columns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		printers.NameColumn(),
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		printers.AgeColumn(),
	}
}

// MutatingTableConvertor prints mutating webhook configurations as NAME
// WEBHOOKS AGE.
func MutatingTableConvertor() printers.TableConvertor[*admissionregistrationv1.MutatingWebhookConfiguration] {
	return printers.TableConvertor[*admissionregistrationv1.MutatingWebhookConfiguration]{
		Columns: columns(),
		Cells: func(cfg *admissionregistrationv1.MutatingWebhookConfiguration) []interface{} {
			return []interface{}{cfg.Name, int64(len(cfg.Webhooks)), printers.Age(cfg.CreationTimestamp)}
		},
	}
}

// ValidatingTableConvertor prints validating webhook configurations as NAME
// WEBHOOKS AGE.
func ValidatingTableConvertor() printers.TableConvertor[*admissionregistrationv1.ValidatingWebhookConfiguration] {
	return printers.TableConvertor[*admissionregistrationv1.ValidatingWebhookConfiguration]{
		Columns: columns(),
		Cells: func(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) []interface{} {
			return []interface{}{cfg.Name, int64(len(cfg.Webhooks)), printers.Age(cfg.CreationTimestamp)}
		},
	}
}
