package policies

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// PolicyTableConvertor prints policies as kubectl does for Kubernetes:
// NAME VALIDATIONS PARAMKIND AGE.
func PolicyTableConvertor() printers.TableConvertor[*admissionregistrationv1.ValidatingAdmissionPolicy] {
	return printers.TableConvertor[*admissionregistrationv1.ValidatingAdmissionPolicy]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
			{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
			printers.AgeColumn(),
		},
		Cells: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) []interface{} {
			paramKind := "<unset>"
			if p.Spec.ParamKind != nil {
				paramKind = p.Spec.ParamKind.APIVersion + "/" + p.Spec.ParamKind.Kind
			}
			return []interface{}{p.Name, int64(len(p.Spec.Validations)), paramKind, printers.Age(p.CreationTimestamp)}
		},
	}
}

// BindingTableConvertor prints bindings as kubectl does for Kubernetes:
// NAME POLICYNAME PARAMREF AGE.
func BindingTableConvertor() printers.TableConvertor[*admissionregistrationv1.ValidatingAdmissionPolicyBinding] {
	return printers.TableConvertor[*admissionregistrationv1.ValidatingAdmissionPolicyBinding]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the name of the policy definition"},
			{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource"},
			printers.AgeColumn(),
		},
		Cells: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) []interface{} {
			paramRef := "<unset>"
			if r := b.Spec.ParamRef; r != nil {
				switch {
				case r.Name != "" && r.Namespace != "":
					paramRef = r.Namespace + "/" + r.Name
				case r.Name != "":
					paramRef = "*/" + r.Name
				case r.Selector != nil:
					paramRef = strings.TrimSpace(fmt.Sprint(metav1.FormatLabelSelector(r.Selector)))
				}
			}
			return []interface{}{b.Name, b.Spec.PolicyName, paramRef, printers.Age(b.CreationTimestamp)}
		},
	}
}

// MutatingPolicyTableConvertor prints mutating policies: NAME MUTATIONS
// PARAMKIND AGE.
func MutatingPolicyTableConvertor() printers.TableConvertor[*admissionregistrationv1.MutatingAdmissionPolicy] {
	return printers.TableConvertor[*admissionregistrationv1.MutatingAdmissionPolicy]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Mutations", Type: "integer", Description: "Mutations indicates the number of mutations rules defined in this configuration"},
			{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
			printers.AgeColumn(),
		},
		Cells: func(p *admissionregistrationv1.MutatingAdmissionPolicy) []interface{} {
			paramKind := "<unset>"
			if p.Spec.ParamKind != nil {
				paramKind = p.Spec.ParamKind.APIVersion + "/" + p.Spec.ParamKind.Kind
			}
			return []interface{}{p.Name, int64(len(p.Spec.Mutations)), paramKind, printers.Age(p.CreationTimestamp)}
		},
	}
}

// MutatingBindingTableConvertor prints bindings of mutating policies: NAME
// POLICYNAME PARAMREF AGE.
func MutatingBindingTableConvertor() printers.TableConvertor[*admissionregistrationv1.MutatingAdmissionPolicyBinding] {
	return printers.TableConvertor[*admissionregistrationv1.MutatingAdmissionPolicyBinding]{
		Columns: BindingTableConvertor().Columns,
		Cells: func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) []interface{} {
			return BindingTableConvertor().Cells(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: b.ObjectMeta, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: b.Spec.PolicyName, ParamRef: b.Spec.ParamRef},
			})
		},
	}
}
