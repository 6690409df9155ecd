package policies

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func policy(name string, conditions ...admissionregistrationv1.MatchCondition) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: ptr.To(admissionregistrationv1.Fail),
		MatchConstraints: &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{}, MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
		Validations:     []admissionregistrationv1.Validation{{Expression: "true"}},
		MatchConditions: conditions,
	}}
}

func TestPolicyUpdateKeepsStoredMatchConditions(t *testing.T) {
	v := NewValidator()
	stored := policy("p", admissionregistrationv1.MatchCondition{Name: "m", Expression: "true"}, admissionregistrationv1.MatchCondition{Name: "m", Expression: "true"})
	if errs := v.ValidatePolicy(stored); len(errs) == 0 {
		t.Fatal("duplicate match condition names accepted on create")
	}
	relabeled := stored.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	if errs := v.ValidatePolicyUpdate(relabeled, stored); len(errs) != 0 {
		t.Errorf("update keeping the stored match conditions: %v", errs)
	}
	withParams := relabeled.DeepCopy()
	withParams.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	if errs := v.ValidatePolicyUpdate(withParams, stored); len(errs) == 0 {
		t.Error("update changing the paramKind does not validate the match conditions again")
	}
}

func TestUpdatesValidateTheName(t *testing.T) {
	v := NewValidator()
	p := policy("Bad_Name")
	if errs := v.ValidatePolicyUpdate(p, p.DeepCopy()); len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Errorf("policy with a stored invalid name: %v, want one error on metadata.name", errs)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
	}}
	if errs := v.ValidateBindingUpdate(b, b.DeepCopy()); len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Errorf("binding with a stored invalid name: %v, want one error on metadata.name", errs)
	}
}
