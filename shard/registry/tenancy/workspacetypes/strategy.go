// Package workspacetypes serves tenancy.kcp.io/v1alpha1 WorkspaceTypes: the
// types of workspaces, with their initializers, default API bindings and
// allowed parents and children. It also holds the validation of workspace
// type names and references that the workspaces registry shares.
package workspacetypes

import (
	"context"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// nameRE is the pattern of tenancyv1alpha1.WorkspaceTypeName.
var nameRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// nameMessage explains what a valid workspace type name looks like.
const nameMessage = "a workspace type name must consist of at most 63 lower case alphanumeric characters or '-', start with a letter and end with an alphanumeric character (e.g. 'team')"

// reservedNames cannot name a WorkspaceType, as in kcp.
var reservedNames = map[string]bool{"system": true, "any": true}

// IsValidName tells whether name is a valid workspace type name.
func IsValidName(name tenancyv1alpha1.WorkspaceTypeName) bool {
	return nameRE.MatchString(string(name))
}

// ValidateName is the validation.ValidateNameFunc of WorkspaceType objects:
// a workspace type name that is not reserved ("system", "any"). With prefix,
// name is a generateName prefix and may end with '-'.
func ValidateName(name string, prefix bool) []string {
	if prefix && strings.HasSuffix(name, "-") {
		name = name[:len(name)-1] + "a"
	}
	if !IsValidName(tenancyv1alpha1.WorkspaceTypeName(name)) {
		return []string{nameMessage}
	}
	if reservedNames[name] {
		return []string{"the name " + name + " is reserved"}
	}
	return nil
}

// ValidateReference validates a reference to a WorkspaceType: a valid type
// name, and a valid logical cluster path if the path is set.
func ValidateReference(ref tenancyv1alpha1.WorkspaceTypeReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case ref.Name == "":
		errs = append(errs, field.Required(p.Child("name"), ""))
	case !IsValidName(ref.Name):
		errs = append(errs, field.Invalid(p.Child("name"), ref.Name, nameMessage))
	}
	if ref.Path != "" && !logicalcluster.IsValidPath(ref.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), ref.Path, logicalcluster.ValidationMessage))
	}
	return errs
}

// strategy is the create, update and delete strategy of WorkspaceTypes.
// Writes keep the status, which only the status subresource changes.
type strategy struct {
	store.Strategy[*tenancyv1alpha1.WorkspaceType]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate)}
}

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(tenancyv1alpha1.SchemeGroupVersion, "status")
}

// PrepareForCreate drops the status of the request.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	obj.(*tenancyv1alpha1.WorkspaceType).Status = tenancyv1alpha1.WorkspaceTypeStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	obj.(*tenancyv1alpha1.WorkspaceType).Status = old.(*tenancyv1alpha1.WorkspaceType).Status
}

// validate validates a new WorkspaceType.
func validate(t *tenancyv1alpha1.WorkspaceType) field.ErrorList {
	errs := validation.ValidateObjectMeta(&t.ObjectMeta, false, ValidateName, field.NewPath("metadata"))
	return append(errs, validateSpec(&t.Spec, field.NewPath("spec"))...)
}

// validateUpdate validates an update: the spec may change, but must stay
// valid.
func validateUpdate(t, old *tenancyv1alpha1.WorkspaceType) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&t.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateSpec(&t.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *tenancyv1alpha1.WorkspaceTypeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ref := range spec.Extend.With {
		errs = append(errs, ValidateReference(ref, p.Child("extend", "with").Index(i))...)
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.AdditionalWorkspaceLabels, p.Child("additionalWorkspaceLabels"))...)
	if ref := spec.DefaultChildWorkspaceType; ref != nil {
		errs = append(errs, ValidateReference(*ref, p.Child("defaultChildWorkspaceType"))...)
	}
	errs = append(errs, validateSelector(spec.LimitAllowedChildren, p.Child("limitAllowedChildren"))...)
	errs = append(errs, validateSelector(spec.LimitAllowedParents, p.Child("limitAllowedParents"))...)
	for i, b := range spec.DefaultAPIBindings {
		bp := p.Child("defaultAPIBindings").Index(i)
		if b.Export == "" {
			errs = append(errs, field.Required(bp.Child("export"), ""))
		}
		if b.Path != "" && !logicalcluster.IsValidPath(b.Path) {
			errs = append(errs, field.Invalid(bp.Child("path"), b.Path, logicalcluster.ValidationMessage))
		}
	}
	return errs
}

// validateSelector validates limitAllowedChildren or limitAllowedParents:
// exactly one of none and types is set, and every type reference is valid.
func validateSelector(s *tenancyv1alpha1.WorkspaceTypeSelector, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case s.None && len(s.Types) > 0:
		errs = append(errs, field.Invalid(p.Child("types"), s.Types, "must be empty when none is true"))
	case !s.None && len(s.Types) == 0:
		errs = append(errs, field.Required(p, "either none or types must be set"))
	}
	for i, ref := range s.Types {
		errs = append(errs, ValidateReference(ref, p.Child("types").Index(i))...)
	}
	return errs
}

// statusStrategy updates status only.
type statusStrategy struct{ strategy }

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(tenancyv1alpha1.SchemeGroupVersion, "spec", "metadata.labels", "metadata.annotations")
}

// PrepareForUpdate keeps the stored spec, labels and annotations.
func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	t, oldT := obj.(*tenancyv1alpha1.WorkspaceType), old.(*tenancyv1alpha1.WorkspaceType)
	t.Spec = oldT.Spec
	t.Labels, t.Annotations = oldT.Labels, oldT.Annotations
}

// ValidateUpdate validates the status: every virtual workspace has a URL,
// and no URL is listed twice.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	t, oldT := obj.(*tenancyv1alpha1.WorkspaceType), old.(*tenancyv1alpha1.WorkspaceType)
	errs := validation.ValidateObjectMetaUpdate(&t.ObjectMeta, &oldT.ObjectMeta, field.NewPath("metadata"))
	seen := map[string]bool{}
	for i, vw := range t.Status.VirtualWorkspaces {
		p := field.NewPath("status", "virtualWorkspaces").Index(i).Child("url")
		switch {
		case vw.URL == "":
			errs = append(errs, field.Required(p, ""))
		case seen[vw.URL]:
			errs = append(errs, field.Duplicate(p, vw.URL))
		}
		seen[vw.URL] = true
	}
	return errs
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
