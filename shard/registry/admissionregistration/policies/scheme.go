// Package policies is the registry of admissionregistration.k8s.io/v1
// validatingadmissionpolicies (with their status),
// validatingadmissionpolicybindings, mutatingadmissionpolicies and
// mutatingadmissionpolicybindings: scheme registration, defaulting,
// strategies, validation (including compiling every CEL expression, as
// kube-apiserver does), storage and table printing.
package policies

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers the policy kinds as admissionregistration.k8s.io/v1
// kinds and as kinds of the group's internal version, their defaulting and
// their field selector labels.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, admissionregistrationv1.SchemeGroupVersion,
		&admissionregistrationv1.ValidatingAdmissionPolicy{}, &admissionregistrationv1.ValidatingAdmissionPolicyList{},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{},
	)
	store.AddDefaulting(s, SetPolicyDefaults, func(l *admissionregistrationv1.ValidatingAdmissionPolicyList) []admissionregistrationv1.ValidatingAdmissionPolicy {
		return l.Items
	})
	store.AddDefaulting(s, SetBindingDefaults, func(l *admissionregistrationv1.ValidatingAdmissionPolicyBindingList) []admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return l.Items
	})
	if err := store.AddFieldLabels(s, admissionregistrationv1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion,
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"); err != nil {
		return err
	}
	return addMutatingToScheme(s)
}

// SetPolicyDefaults defaults a policy as Kubernetes does: failurePolicy
// Fail, and the defaults of its match constraints.
func SetPolicyDefaults(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	setMatchDefaults(p.Spec.MatchConstraints)
}

// SetBindingDefaults defaults the match resources of a binding.
func SetBindingDefaults(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	setMatchDefaults(b.Spec.MatchResources)
}

// setMatchDefaults defaults match resources: matchPolicy Equivalent, empty
// (match-all) namespace and object selectors, rule scope "*".
func setMatchDefaults(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				rules[i].Scope = ptr.To(admissionregistrationv1.AllScopes)
			}
		}
	}
}
