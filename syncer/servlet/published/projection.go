package published

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

// Plural returns the plural resource name of a kind, as kubectl and the
// API machinery guess it: lower case, English plural rules
// (Zertifikat → zertifikats, Policy → policies).
func Plural(kind string) string {
	plural, _ := meta.UnsafeGuessKindToResource(metav1.SchemeGroupVersion.WithKind(kind))
	return plural.Resource
}

// Project returns the CustomResourceDefinition that the platform serves for
// a published resource: crd with only the published version, renamed to
// the projected version, in the Service's API group apiGroup, with the
// projected kind, plural (computed from the kind unless given; lower-cased,
// since resource names are), short names and categories (the CRD's unless
// given) and scope. The schema is the CRD's, verbatim. It fails if the CRD
// does not serve the published version.
func Project(crd *apiextensionsv1.CustomResourceDefinition, pr *servicesv1alpha1.PublishedResource, apiGroup string) (*apiextensionsv1.CustomResourceDefinition, error) {
	src := pr.Spec.Resource
	i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == src.Version })
	if i < 0 {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no version %s", crd.Name, src.Version)
	}
	version := *crd.Spec.Versions[i].DeepCopy()
	version.Served, version.Storage = true, true

	names := *crd.Spec.Names.DeepCopy()
	scope := crd.Spec.Scope
	if p := pr.Spec.Projection; p != nil {
		if p.Version != "" {
			version.Name = p.Version
		}
		if p.Kind != "" && p.Kind != names.Kind {
			names.Kind = p.Kind
			names.ListKind = p.Kind + "List"
			names.Singular = strings.ToLower(p.Kind)
			names.Plural = Plural(p.Kind)
		}
		if p.Plural != "" {
			names.Plural = strings.ToLower(p.Plural)
		}
		if p.ShortNames != nil {
			names.ShortNames = slices.Clone(p.ShortNames)
		}
		if p.Categories != nil {
			names.Categories = slices.Clone(p.Categories)
		}
		if p.Scope != "" {
			scope = p.Scope
		}
	}

	out := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: names.Plural + "." + apiGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:    apiGroup,
			Names:    names,
			Scope:    scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version},
		},
	}
	return out, nil
}

// HasStatusSubresource tells whether the published version of crd has a
// status subresource, the condition for syncing status back up.
func HasStatusSubresource(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return v.Subresources != nil && v.Subresources.Status != nil
		}
	}
	return false
}
