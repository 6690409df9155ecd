package flowcontrol

import (
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/utils/ptr"
)

func fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func wantFields(t *testing.T, what string, errs field.ErrorList, want ...string) {
	t.Helper()
	got := fields(errs)
	if len(got) != len(want) {
		t.Errorf("%s: errors %v, want fields %v", what, errs, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: errors %v, want fields %v", what, errs, want)
			return
		}
	}
}

func TestMandatoryFlowSchemas(t *testing.T) {
	wantFields(t, "mandatory exempt", ValidateFlowSchema(bootstrap.MandatoryFlowSchemaExempt.DeepCopy()))
	wantFields(t, "mandatory catch-all", ValidateFlowSchema(bootstrap.MandatoryFlowSchemaCatchAll.DeepCopy()))
	changed := bootstrap.MandatoryFlowSchemaCatchAll.DeepCopy()
	changed.Spec.MatchingPrecedence = 9999
	wantFields(t, "catch-all with another precedence", ValidateFlowSchema(changed), "spec")
	wantFields(t, "catch-all updated with another precedence", ValidateFlowSchemaUpdate(changed, bootstrap.MandatoryFlowSchemaCatchAll), "spec")
}

func TestMandatoryPriorityLevels(t *testing.T) {
	wantFields(t, "mandatory exempt", ValidatePriorityLevel(bootstrap.MandatoryPriorityLevelConfigurationExempt.DeepCopy()))
	wantFields(t, "mandatory catch-all", ValidatePriorityLevel(bootstrap.MandatoryPriorityLevelConfigurationCatchAll.DeepCopy()))
	tuned := bootstrap.MandatoryPriorityLevelConfigurationExempt.DeepCopy()
	tuned.Spec.Exempt.NominalConcurrencyShares = ptr.To[int32](10)
	wantFields(t, "exempt with other exempt shares", ValidatePriorityLevel(tuned))
	changed := bootstrap.MandatoryPriorityLevelConfigurationCatchAll.DeepCopy()
	changed.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](50)
	wantFields(t, "catch-all with other shares", ValidatePriorityLevel(changed), "spec")
}

func TestExemptTypeAndName(t *testing.T) {
	exemptType := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementExempt,
	}}
	wantFields(t, "type Exempt not named exempt", ValidatePriorityLevel(exemptType), "spec.type")
}

func TestUpdateValidatesTheName(t *testing.T) {
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"}, MatchingPrecedence: 500,
	}}
	wantFields(t, "flow schema with a stored invalid name", ValidateFlowSchemaUpdate(fs, fs.DeepCopy()), "metadata.name")
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](1), LendablePercent: ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
		},
	}}
	wantFields(t, "priority level with a stored invalid name", ValidatePriorityLevelUpdate(pl, pl.DeepCopy()), "metadata.name")
}

func TestFlowSchemaSubjectsAndVerbs(t *testing.T) {
	fs := func(edit func(r *flowcontrolv1.PolicyRulesWithSubjects)) *flowcontrolv1.FlowSchema {
		r := flowcontrolv1.PolicyRulesWithSubjects{
			Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "alice"}}},
			ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		}
		edit(&r)
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "fs"}, Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"}, MatchingPrecedence: 500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{r},
		}}
	}
	wantFields(t, "valid", ValidateFlowSchema(fs(func(*flowcontrolv1.PolicyRulesWithSubjects) {})))
	wantFields(t, "user subject with a group", ValidateFlowSchema(fs(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
		r.Subjects[0].Group = &flowcontrolv1.GroupSubject{Name: "g"}
	})), "spec.rules[0].subjects[0].group")
	wantFields(t, "unknown resource verb", ValidateFlowSchema(fs(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
		r.ResourceRules[0].Verbs = []string{"get", "fly"}
	})), "spec.rules[0].resourceRules[0].verbs")
	wantFields(t, "unknown non-resource verb", ValidateFlowSchema(fs(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
		r.NonResourceRules[0].Verbs = []string{"fly"}
	})), "spec.rules[0].nonResourceRules[0].verbs")
	wantFields(t, "star and an unknown verb", ValidateFlowSchema(fs(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
		r.ResourceRules[0].Verbs = []string{"*", "fly"}
	})), "spec.rules[0].resourceRules[0].verbs")
}

// wantErrors checks the errors as "field: type", in any order.
func wantErrors(t *testing.T, what string, errs field.ErrorList, want ...string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Field+": "+string(e.Type))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: errors %v, want %v", what, errs, want)
	}
}

func TestPriorityLevelMembers(t *testing.T) {
	reject := func() *flowcontrolv1.LimitedPriorityLevelConfiguration {
		return &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}
	}
	pl := func(typ flowcontrolv1.PriorityLevelEnablement, limited *flowcontrolv1.LimitedPriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
		return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "pl"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: typ, Limited: limited}}
	}
	wantErrors(t, "valid", ValidatePriorityLevel(pl(flowcontrolv1.PriorityLevelEnablementLimited, reject())))
	wantErrors(t, "no type", ValidatePriorityLevel(pl("", reject())), "spec.type: FieldValueRequired", "spec.limited: FieldValueForbidden")
	wantErrors(t, "unknown type", ValidatePriorityLevel(pl("Unlimited", reject())), "spec.type: FieldValueNotSupported", "spec.limited: FieldValueForbidden")
	wantErrors(t, "exempt type with an empty limited", ValidatePriorityLevel(pl(flowcontrolv1.PriorityLevelEnablementExempt, &flowcontrolv1.LimitedPriorityLevelConfiguration{})),
		"spec.type: FieldValueInvalid", "spec.limited: FieldValueForbidden", "spec.limited.limitResponse.type: FieldValueRequired")
	noResponseType := reject()
	noResponseType.LimitResponse.Type = ""
	wantErrors(t, "no limit response type", ValidatePriorityLevel(pl(flowcontrolv1.PriorityLevelEnablementLimited, noResponseType)),
		"spec.limited.limitResponse.type: FieldValueRequired")
	dropWithQueuing := reject()
	dropWithQueuing.LimitResponse = flowcontrolv1.LimitResponse{Type: "Drop", Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1}}
	wantErrors(t, "unknown limit response type with queuing", ValidatePriorityLevel(pl(flowcontrolv1.PriorityLevelEnablementLimited, dropWithQueuing)),
		"spec.limited.limitResponse.type: FieldValueNotSupported", "spec.limited.limitResponse.queuing: FieldValueForbidden")
	// An update keeps a level stored without type: only the type is
	// refused again, not the kept spec.limited.
	stored := pl("", reject())
	stored.ResourceVersion = "1"
	relabeled := stored.DeepCopy()
	relabeled.Labels = map[string]string{"touched": "yes"}
	wantErrors(t, "update of a stored level without type", ValidatePriorityLevelUpdate(relabeled, stored), "spec.type: FieldValueRequired")
}
