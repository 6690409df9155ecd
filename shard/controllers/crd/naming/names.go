package naming

import (
	"fmt"
	"slices"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
)

// usedNames are the resource names (plural, singular, short names) and the
// kinds (kind, list kind) accepted by the CRDs of one group, and those the
// group's built-in APIs use.
type usedNames struct {
	resources, kinds sets.Set[string]
	// builtinResources and builtinKinds are never free, not even for a CRD
	// that accepted them before.
	builtinResources, builtinKinds sets.Set[string]
}

// BuiltinNames returns the names that the built-in APIs of a group use, in
// any version: resource names (plural, singular and short names) and kinds
// (kind and list kind). No CRD of the group may take them: the shard
// serves the built-in resource under its name, so the CRD's could never be
// reached, and kinds must map to one resource. kube-apiserver accepts such
// a CRD and then neither serves nor advertises it (or, in a version the
// group does not have, advertises it and answers 404).
type BuiltinNames func(group string) (resources, kinds []string)

// namesInUse collects the accepted names of crds. Like upstream it counts
// the CRD being named too: names it has already accepted are its own, and
// equalToAcceptedOrFresh lets it keep them.
func namesInUse(crds []*apiextensionsv1.CustomResourceDefinition, builtinResources, builtinKinds []string) usedNames {
	used := usedNames{
		resources:        sets.New[string](),
		kinds:            sets.New[string](),
		builtinResources: sets.New(builtinResources...),
		builtinKinds:     sets.New(builtinKinds...),
	}
	for _, crd := range crds {
		names := crd.Status.AcceptedNames
		used.resources.Insert(names.Plural, names.Singular)
		used.resources.Insert(names.ShortNames...)
		used.kinds.Insert(names.Kind, names.ListKind)
	}
	return used
}

// calculateNamesAndConditions returns the names crd can accept given the
// names in use in its group, its NamesAccepted condition, and its
// Established condition as the naming controller leaves it. It is
// upstream's algorithm: a requested name is accepted if it is already
// accepted by crd or free; a conflicting one keeps the previously accepted
// name and makes NamesAccepted False. Unlike upstream, a name a built-in
// API of the group uses is never free.
func calculateNamesAndConditions(crd *apiextensionsv1.CustomResourceDefinition, used usedNames) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition, apiextensionsv1.CustomResourceDefinitionCondition) {
	namesAccepted := apiextensionsv1.CustomResourceDefinitionCondition{
		Type:   apiextensionsv1.NamesAccepted,
		Status: apiextensionsv1.ConditionUnknown,
	}
	conflict := func(reason string, err error) {
		namesAccepted.Status = apiextensionsv1.ConditionFalse
		namesAccepted.Reason = reason
		namesAccepted.Message = err.Error()
	}

	requested, accepted := crd.Spec.Names, crd.Status.AcceptedNames
	names := *accepted.DeepCopy()

	// Go on after a conflict, so that status gets the best match possible.
	if err := used.resource(requested.Plural, accepted.Plural); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = requested.Plural
	}
	if err := used.resource(requested.Singular, accepted.Singular); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = requested.Singular
	}
	if !slices.Equal(requested.ShortNames, accepted.ShortNames) {
		var errs []error
		own := sets.New(accepted.ShortNames...)
		for _, shortName := range requested.ShortNames {
			accepted := ""
			if own.Has(shortName) {
				accepted = shortName
			}
			if err := used.resource(shortName, accepted); err != nil {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			conflict("ShortNamesConflict", err)
		} else {
			names.ShortNames = slices.Clone(requested.ShortNames)
		}
	}
	if err := used.kind(requested.Kind, accepted.Kind); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = requested.Kind
	}
	if err := used.kind(requested.ListKind, accepted.ListKind); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = requested.ListKind
	}
	names.Categories = slices.Clone(requested.Categories)

	if namesAccepted.Status == apiextensionsv1.ConditionUnknown {
		namesAccepted.Status = apiextensionsv1.ConditionTrue
		namesAccepted.Reason = "NoConflicts"
		namesAccepted.Message = "no conflicts found"
	}

	// Established stays False until the establishing controller sees
	// NamesAccepted through its informer; once True it stays True.
	established := apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Established,
		Status:  apiextensionsv1.ConditionFalse,
		Reason:  "NotAccepted",
		Message: "not all names are accepted",
	}
	if old := apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && namesAccepted.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Established,
			Status:  apiextensionsv1.ConditionFalse,
			Reason:  "Installing",
			Message: "the initial names have been accepted",
		}
	}
	return names, namesAccepted, established
}

// resource accepts a requested resource name, see equalToAcceptedOrFresh.
func (u usedNames) resource(requested, accepted string) error {
	return equalToAcceptedOrFresh(requested, accepted, u.resources, u.builtinResources)
}

// kind accepts a requested kind or list kind, see equalToAcceptedOrFresh.
func (u usedNames) kind(requested, accepted string) error {
	return equalToAcceptedOrFresh(requested, accepted, u.kinds, u.builtinKinds)
}

// equalToAcceptedOrFresh accepts requested if no built-in API uses it and
// it is what was accepted before or no CRD uses it.
func equalToAcceptedOrFresh(requested, accepted string, used, builtin sets.Set[string]) error {
	if builtin.Has(requested) {
		return fmt.Errorf("%q is already in use by a built-in API of the group", requested)
	}
	if requested == accepted || !used.Has(requested) {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}
