package published

import (
	"regexp"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

var (
	placeholder = regexp.MustCompile(`\$[A-Za-z]+`)
	kindRE      = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	knownHolder = sets.New(PlaceholderClusterName, PlaceholderNamespace, PlaceholderNamespaceHash, PlaceholderName, PlaceholderNameHash)
)

// Validate returns what is wrong with a PublishedResource's spec: its
// source resource, filter, naming templates, projection and related
// objects. The servlet publishes and syncs nothing for a PublishedResource
// with errors, and puts their aggregate in its Ready condition.
func Validate(pr *servicesv1alpha1.PublishedResource) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateResource(pr.Spec.Resource, spec.Child("resource"))...)
	errs = append(errs, validateFilter(pr.Spec.Filter, spec.Child("filter"))...)
	errs = append(errs, validateNaming(pr.Spec.Naming, spec.Child("naming"))...)
	errs = append(errs, validateProjection(pr.Spec.Projection, spec.Child("projection"))...)
	ids := sets.New[string]()
	for i, r := range pr.Spec.Related {
		p := spec.Child("related").Index(i)
		if ids.Has(r.Identifier) {
			errs = append(errs, field.Duplicate(p.Child("identifier"), r.Identifier))
		}
		ids.Insert(r.Identifier)
		errs = append(errs, validateRelated(r, p)...)
	}
	return errs
}

func validateResource(r servicesv1alpha1.SourceResourceDescriptor, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.APIGroup == "" {
		errs = append(errs, field.Required(p.Child("apiGroup"), "a CRD's group"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(r.APIGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), r.APIGroup, msg))
		}
	}
	if r.Version == "" {
		errs = append(errs, field.Required(p.Child("version"), ""))
	}
	if r.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	return errs
}

func validateFilter(f *servicesv1alpha1.ResourceFilter, p *field.Path) field.ErrorList {
	if f == nil {
		return nil
	}
	var errs field.ErrorList
	if f.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(f.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), f.Namespace, msg))
		}
	}
	if f.Resource != nil {
		if _, err := metav1.LabelSelectorAsSelector(f.Resource); err != nil {
			errs = append(errs, field.Invalid(p.Child("resource"), f.Resource, err.Error()))
		}
	}
	return errs
}

// validateNaming checks that the templates use known placeholders only,
// that they expand to valid names, and that the name template tells
// objects apart (it holds $remoteName or $remoteNameHash).
func validateNaming(n *servicesv1alpha1.ResourceNaming, p *field.Path) field.ErrorList {
	nsTemplate, nameTemplate := Templates(n)
	var errs field.ErrorList
	for _, t := range []struct {
		path     *field.Path
		template string
		check    func(string) []string
	}{
		{p.Child("namespace"), nsTemplate, validation.IsDNS1123Label},
		{p.Child("name"), nameTemplate, validation.IsDNS1123Subdomain},
	} {
		for _, h := range placeholder.FindAllString(t.template, -1) {
			if !knownHolder.Has(h) {
				errs = append(errs, field.Invalid(t.path, t.template, "unknown placeholder "+h+"; known are "+strings.Join(sets.List(knownHolder), ", ")))
			}
		}
		// A typical expansion: placeholders of a valid name give valid names.
		sample := Expand(t.template, Remote{Cluster: "1084s8ceexsehjm2", Namespace: "default", Name: "example"})
		for _, msg := range t.check(sample) {
			errs = append(errs, field.Invalid(t.path, t.template, "expands to "+sample+": "+msg))
		}
	}
	if used := sets.New(placeholder.FindAllString(nameTemplate, -1)...); !used.HasAny(PlaceholderName, PlaceholderNameHash) {
		errs = append(errs, field.Invalid(p.Child("name"), nameTemplate, "must hold $remoteName or $remoteNameHash, or all objects get the same name"))
	}
	return errs
}

func validateProjection(pj *servicesv1alpha1.ResourceProjection, p *field.Path) field.ErrorList {
	if pj == nil {
		return nil
	}
	var errs field.ErrorList
	if pj.Version != "" {
		for _, msg := range validation.IsDNS1035Label(pj.Version) {
			errs = append(errs, field.Invalid(p.Child("version"), pj.Version, msg))
		}
	}
	if pj.Kind != "" && !kindRE.MatchString(pj.Kind) {
		errs = append(errs, field.Invalid(p.Child("kind"), pj.Kind, "must be CamelCase: a capital letter, then letters and digits"))
	}
	if pj.Plural != "" {
		for _, msg := range validation.IsDNS1035Label(strings.ToLower(pj.Plural)) {
			errs = append(errs, field.Invalid(p.Child("plural"), pj.Plural, msg))
		}
	}
	for i, s := range pj.ShortNames {
		for _, msg := range validation.IsDNS1035Label(s) {
			errs = append(errs, field.Invalid(p.Child("shortNames").Index(i), s, msg))
		}
	}
	for i, c := range pj.Categories {
		for _, msg := range validation.IsDNS1035Label(c) {
			errs = append(errs, field.Invalid(p.Child("categories").Index(i), c, msg))
		}
	}
	switch pj.Scope {
	case "", apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped:
	default:
		errs = append(errs, field.NotSupported(p.Child("scope"), pj.Scope, []apiextensionsv1.ResourceScope{apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped}))
	}
	return errs
}

func validateRelated(r servicesv1alpha1.RelatedResourceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Identifier == "" {
		errs = append(errs, field.Required(p.Child("identifier"), ""))
	}
	switch r.Origin {
	case servicesv1alpha1.RelatedResourceOriginService, servicesv1alpha1.RelatedResourceOriginPlatform:
	default:
		errs = append(errs, field.NotSupported(p.Child("origin"), r.Origin, []servicesv1alpha1.RelatedResourceOrigin{servicesv1alpha1.RelatedResourceOriginService, servicesv1alpha1.RelatedResourceOriginPlatform}))
	}
	switch r.Kind {
	case "Secret", "ConfigMap":
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), r.Kind, []string{"Secret", "ConfigMap"}))
	}
	errs = append(errs, validateLocator(&r.Reference.Name, p.Child("reference", "name"))...)
	errs = append(errs, validateLocator(r.Reference.Namespace, p.Child("reference", "namespace"))...)
	return errs
}

func validateLocator(l *servicesv1alpha1.ResourceLocator, p *field.Path) field.ErrorList {
	if l == nil {
		return nil
	}
	var errs field.ErrorList
	if l.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	if l.Regex != nil && l.Regex.Pattern != "" {
		if _, err := regexp.Compile(l.Regex.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("regex", "pattern"), l.Regex.Pattern, err.Error()))
		}
	}
	return errs
}
