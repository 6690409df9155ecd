package flowcontrol

import (
	"fmt"
	"math"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

// maxMatchingPrecedence is the largest matchingPrecedence, and that of the
// catch-all FlowSchema.
const maxMatchingPrecedence = 10000

// maxHashBits bounds the entropy shuffle sharding draws for a hand of
// handSize queues out of queues, as Kubernetes does.
const maxHashBits = 60

var (
	distinguisherMethods = sets.New(string(flowcontrolv1.FlowDistinguisherMethodByUserType), string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType))
	subjectKinds         = sets.New(string(flowcontrolv1.SubjectKindUser), string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount))
	enablements          = sets.New(string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited))
	limitResponseTypes   = sets.New(string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject))
	supportedVerbs       = sets.New("get", "list", "create", "update", "delete", "deletecollection", "patch", "watch", "proxy")
)

// mandatoryFlowSchemas and mandatoryPriorityLevels are the objects every
// API server keeps as Kubernetes defines them (exempt and catch-all), by
// name.
var (
	mandatoryFlowSchemas    = map[string]*flowcontrolv1.FlowSchema{}
	mandatoryPriorityLevels = map[string]*flowcontrolv1.PriorityLevelConfiguration{}
)

func init() {
	for _, fs := range bootstrap.MandatoryFlowSchemas {
		mandatoryFlowSchemas[fs.Name] = fs
	}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		mandatoryPriorityLevels[pl.Name] = pl
	}
}

// ValidateFlowSchema validates a FlowSchema. The spec of a mandatory
// schema (exempt, catch-all) must be Kubernetes' own.
func ValidateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&fs.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateFlowSchemaSpec(fs.Name, &fs.Spec, field.NewPath("spec"))...)
	if mandatory, ok := mandatoryFlowSchemas[fs.Name]; ok && !equality.Semantic.DeepEqual(fs.Spec, mandatory.Spec) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), fs.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	return allErrs
}

// ValidateFlowSchemaUpdate validates an update of a FlowSchema as a new
// one, as Kubernetes does: a stored name that is no longer valid is
// refused too. The immutability of the metadata is checked for every
// kind by the generic update path.
func ValidateFlowSchemaUpdate(fs, _ *flowcontrolv1.FlowSchema) field.ErrorList {
	return ValidateFlowSchema(fs)
}

// ValidateFlowSchemaStatusUpdate validates a status update.
func ValidateFlowSchemaStatusUpdate(fs, old *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&fs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status", "conditions")
	seen := sets.New[string]()
	for i, c := range fs.Status.Conditions {
		allErrs = append(allErrs, validateCondition(string(c.Type), string(c.Status), seen, p.Index(i))...)
	}
	return allErrs
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case spec.MatchingPrecedence <= 0:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("matchingPrecedence"), spec.MatchingPrecedence, "must be a positive value"))
	case spec.MatchingPrecedence > maxMatchingPrecedence:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("matchingPrecedence"), spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", maxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("matchingPrecedence"), spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if d := spec.DistinguisherMethod; d != nil && !distinguisherMethods.Has(string(d.Type)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("distinguisherMethod", "type"), d.Type, sets.List(distinguisherMethods)))
	}
	if spec.PriorityLevelConfiguration.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.PriorityLevelConfiguration.Name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("priorityLevelConfiguration", "name"), spec.PriorityLevelConfiguration.Name, msg))
		}
	}
	for i, rule := range spec.Rules {
		allErrs = append(allErrs, validateRule(&rule, fldPath.Child("rules").Index(i))...)
	}
	return allErrs
}

func validateRule(rule *flowcontrolv1.PolicyRulesWithSubjects, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Subjects) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("subjects"), "subjects must contain at least one value"))
	}
	for i, s := range rule.Subjects {
		allErrs = append(allErrs, validateSubject(&s, fldPath.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i, r := range rule.ResourceRules {
		allErrs = append(allErrs, validateResourceRule(&r, fldPath.Child("resourceRules").Index(i))...)
	}
	for i, r := range rule.NonResourceRules {
		allErrs = append(allErrs, validateNonResourceRule(&r, fldPath.Child("nonResourceRules").Index(i))...)
	}
	return allErrs
}

// validateSubject validates the member of s's kind; the other members must
// be unset, each refused on its own field, as in Kubernetes.
func validateSubject(s *flowcontrolv1.Subject, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !subjectKinds.Has(string(s.Kind)) {
		return append(allErrs, field.NotSupported(fldPath.Child("kind"), s.Kind, sets.List(subjectKinds)))
	}
	if s.Kind != flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
	}
	if s.Kind != flowcontrolv1.SubjectKindUser && s.User != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("user"), "user is forbidden when subject kind is not 'User'"))
	}
	if s.Kind != flowcontrolv1.SubjectKindGroup && s.Group != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("group"), "group is forbidden when subject kind is not 'Group'"))
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("user", "name"), ""))
		}
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("group", "name"), ""))
		}
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("serviceAccount"), "serviceAccount is required when subject kind is 'ServiceAccount'"))
			break
		}
		if s.ServiceAccount.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("serviceAccount", "name"), ""))
		} else if s.ServiceAccount.Name != flowcontrolv1.NameAll {
			for _, msg := range apivalidation.ValidateServiceAccountName(s.ServiceAccount.Name, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccount", "name"), s.ServiceAccount.Name, msg))
			}
		}
		if s.ServiceAccount.Namespace == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("serviceAccount", "namespace"), ""))
		} else {
			for _, msg := range apivalidation.ValidateNamespaceName(s.ServiceAccount.Namespace, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccount", "namespace"), s.ServiceAccount.Namespace, msg))
			}
		}
	}
	return allErrs
}

// validateAllOrList checks a list that is either ["*"] or names.
func validateAllOrList(values []string, all string, fldPath *field.Path, what string) field.ErrorList {
	if len(values) == 0 {
		return field.ErrorList{field.Required(fldPath, what+" must contain at least one value")}
	}
	if len(values) > 1 && sets.New(values...).Has(all) {
		return field.ErrorList{field.Invalid(fldPath, values, fmt.Sprintf("if '%s' is present, must not specify other %s", all, what))}
	}
	return nil
}

// validateVerbs checks the verbs of a resource or non-resource rule: ["*"],
// or verbs Kubernetes knows, refused together on verbs as Kubernetes does.
func validateVerbs(verbs []string, fldPath *field.Path) field.ErrorList {
	if allErrs := validateAllOrList(verbs, flowcontrolv1.VerbAll, fldPath, "verbs"); len(allErrs) > 0 {
		return allErrs
	}
	if len(verbs) == 1 && verbs[0] == flowcontrolv1.VerbAll {
		return nil
	}
	if !supportedVerbs.HasAll(verbs...) {
		return field.ErrorList{field.NotSupported(fldPath, verbs, sets.List(supportedVerbs))}
	}
	return nil
}

func validateResourceRule(r *flowcontrolv1.ResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(r.Verbs, fldPath.Child("verbs"))
	allErrs = append(allErrs, validateAllOrList(r.APIGroups, flowcontrolv1.APIGroupAll, fldPath.Child("apiGroups"), "api groups")...)
	allErrs = append(allErrs, validateAllOrList(r.Resources, flowcontrolv1.ResourceAll, fldPath.Child("resources"), "resources")...)
	if len(r.Namespaces) == 0 && !r.ClusterScope {
		allErrs = append(allErrs, field.Required(fldPath.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
	} else if len(r.Namespaces) > 0 {
		allErrs = append(allErrs, validateAllOrList(r.Namespaces, flowcontrolv1.NamespaceEvery, fldPath.Child("namespaces"), "namespaces")...)
		for i, ns := range r.Namespaces {
			if ns == flowcontrolv1.NamespaceEvery {
				continue
			}
			for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("namespaces").Index(i), ns, msg))
			}
		}
	}
	return allErrs
}

func validateNonResourceRule(r *flowcontrolv1.NonResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(r.Verbs, fldPath.Child("verbs"))
	allErrs = append(allErrs, validateAllOrList(r.NonResourceURLs, flowcontrolv1.NonResourceAll, fldPath.Child("nonResourceURLs"), "non-resource urls")...)
	for i, u := range r.NonResourceURLs {
		p := fldPath.Child("nonResourceURLs").Index(i)
		switch {
		case u == flowcontrolv1.NonResourceAll:
		case !strings.HasPrefix(u, "/"):
			allErrs = append(allErrs, field.Invalid(p, u, "must start with slash"))
		case strings.Contains(strings.TrimSuffix(u, "/*"), "*"):
			allErrs = append(allErrs, field.Invalid(p, u, "wildcard can only appear as the last segment, /*"))
		}
	}
	return allErrs
}

// ValidatePriorityLevel validates a PriorityLevelConfiguration. The spec
// of a mandatory level must be Kubernetes' own, but for the exempt
// configuration of the exempt level, which admins may tune.
func ValidatePriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	return validatePriorityLevel(pl, nil)
}

// validatePriorityLevel validates pl, created when old is nil, else
// updated from old.
func validatePriorityLevel(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&pl.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	var oldSpec *flowcontrolv1.PriorityLevelConfigurationSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	allErrs = append(allErrs, validatePriorityLevelSpec(pl.Name, &pl.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validatePriorityLevelMembers(&pl.Spec, oldSpec, field.NewPath("spec"))...)
	return append(allErrs, validateMandatoryPriorityLevel(pl)...)
}

func validateMandatoryPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	mandatory, ok := mandatoryPriorityLevels[pl.Name]
	if !ok {
		return nil
	}
	spec, msg := pl.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
	if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		spec.Exempt = mandatory.Spec.Exempt
		msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
	}
	if equality.Semantic.DeepEqual(spec, mandatory.Spec) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec"), pl.Spec, msg)}
}

// ValidatePriorityLevelUpdate validates an update of a
// PriorityLevelConfiguration as a new one, as Kubernetes does (see
// ValidateFlowSchemaUpdate), but for validatePriorityLevelMembers, which
// does not check again what the update keeps.
func ValidatePriorityLevelUpdate(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	return validatePriorityLevel(pl, old)
}

// ValidatePriorityLevelStatusUpdate validates a status update.
func ValidatePriorityLevelStatusUpdate(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&pl.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status", "conditions")
	seen := sets.New[string]()
	for i, c := range pl.Status.Conditions {
		allErrs = append(allErrs, validateCondition(string(c.Type), string(c.Status), seen, p.Index(i))...)
	}
	return allErrs
}

func validatePriorityLevelSpec(name string, spec *flowcontrolv1.PriorityLevelConfigurationSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), spec.Type, "type must be 'Exempt' if and only if name is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := spec.Exempt; e != nil {
			allErrs = append(allErrs, validateShares(e.NominalConcurrencyShares, e.LendablePercent, fldPath.Child("exempt"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("exempt"), "must be nil if the type is Limited"))
		}
		l := spec.Limited
		if l == nil {
			return append(allErrs, field.Required(fldPath.Child("limited"), "must not be empty when type is Limited"))
		}
		allErrs = append(allErrs, validateShares(l.NominalConcurrencyShares, l.LendablePercent, fldPath.Child("limited"))...)
		if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("limited", "borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
		}
		allErrs = append(allErrs, validateLimitResponse(&l.LimitResponse, fldPath.Child("limited", "limitResponse"))...)
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, sets.List(enablements)))
	}
	return allErrs
}

func validateShares(shares, lendable *int32, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if shares != nil && *shares < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nominalConcurrencyShares"), *shares, "must be a non-negative integer"))
	}
	if lendable != nil && (*lendable < 0 || *lendable > 100) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lendablePercent"), *lendable, "must be between 0 and 100, inclusive"))
	}
	return allErrs
}

func validateLimitResponse(r *flowcontrolv1.LimitResponse, fldPath *field.Path) field.ErrorList {
	if r.Type == "" {
		return field.ErrorList{field.Required(fldPath.Child("type"), "")}
	}
	if !limitResponseTypes.Has(string(r.Type)) {
		return field.ErrorList{field.NotSupported(fldPath.Child("type"), r.Type, sets.List(limitResponseTypes))}
	}
	if r.Type == flowcontrolv1.LimitResponseTypeReject {
		if r.Queuing != nil {
			return field.ErrorList{field.Forbidden(fldPath.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited")}
		}
		return nil
	}
	q := r.Queuing
	if q == nil {
		return field.ErrorList{field.Required(fldPath.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited")}
	}
	var allErrs field.ErrorList
	p := fldPath.Child("queuing")
	if q.QueueLengthLimit <= 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("queues"), q.Queues, "must be positive"))
	}
	if q.HandSize <= 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("handSize"), q.HandSize, "must be positive"))
	} else if q.HandSize > q.Queues {
		allErrs = append(allErrs, field.Invalid(p.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	} else if q.Queues > 0 {
		if bits := handEntropy(q.Queues, q.HandSize); bits > maxHashBits {
			allErrs = append(allErrs, field.Invalid(p.Child("handSize"), q.HandSize,
				fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, maxHashBits)))
		}
	}
	return allErrs
}

// validatePriorityLevelMembers adds what Kubernetes' declarative
// validation checks beyond validatePriorityLevelSpec: spec.limited and
// spec.exempt are refused with any type but their own (unknown and empty
// types included), spec.limited.limitResponse needs a type and queuing
// exactly with type Queue even when the level's type is not Limited, and a
// limit response with an unknown type has no queuing. Like declarative
// validation, an update does not check these again on what it keeps from
// old (nil on create).
func validatePriorityLevelMembers(spec, old *flowcontrolv1.PriorityLevelConfigurationSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	sameType := old != nil && old.Type == spec.Type
	if !enablements.Has(string(spec.Type)) {
		if spec.Limited != nil && !(sameType && equality.Semantic.DeepEqual(spec.Limited, old.Limited)) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if spec.Exempt != nil && !(sameType && equality.Semantic.DeepEqual(spec.Exempt, old.Exempt)) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("exempt"), "must be nil if the type is not Exempt"))
		}
	}
	l := spec.Limited
	if l == nil {
		return allErrs
	}
	var oldResponse *flowcontrolv1.LimitResponse
	if old != nil && old.Limited != nil {
		if equality.Semantic.DeepEqual(l, old.Limited) {
			return allErrs
		}
		oldResponse = &old.Limited.LimitResponse
		if equality.Semantic.DeepEqual(l.LimitResponse, *oldResponse) {
			return allErrs
		}
	}
	r, p := &l.LimitResponse, fldPath.Child("limited", "limitResponse")
	limited := spec.Type == flowcontrolv1.PriorityLevelEnablementLimited
	if !limited && r.Type == "" && (oldResponse == nil || oldResponse.Type != "") {
		allErrs = append(allErrs, field.Required(p.Child("type"), ""))
	}
	if oldResponse != nil && oldResponse.Type == r.Type && equality.Semantic.DeepEqual(r.Queuing, oldResponse.Queuing) {
		return allErrs
	}
	switch {
	case r.Type == flowcontrolv1.LimitResponseTypeQueue:
		if !limited && r.Queuing == nil {
			allErrs = append(allErrs, field.Required(p.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited"))
		}
	case r.Queuing != nil && (!limited || r.Type != flowcontrolv1.LimitResponseTypeReject):
		// validateLimitResponse refuses it with type Reject.
		allErrs = append(allErrs, field.Forbidden(p.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
	}
	return allErrs
}

// handEntropy is the number of bits needed to pick a hand of handSize
// queues out of deckSize, in order: log2(deckSize^handSize), rounded up.
func handEntropy(deckSize, handSize int32) int {
	return int(math.Ceil(float64(handSize) * math.Log2(float64(deckSize))))
}

func validateCondition(typ, status string, seen sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if typ == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must not be empty"))
	} else if seen.Has(typ) {
		allErrs = append(allErrs, field.Duplicate(fldPath.Child("type"), typ))
	}
	seen.Insert(typ)
	switch status {
	case "True", "False", "Unknown":
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("status"), status, []string{"True", "False", "Unknown"}))
	}
	return allErrs
}
