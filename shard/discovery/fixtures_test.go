package discovery

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// crdOption changes a test CRD.
type crdOption func(*apiextensionsv1.CustomResourceDefinition)

// newCRD returns an Established, namespaced CRD serving and storing v1, with
// a schema (spec.size, status.ready) and the status and scale subresources.
func newCRD(group, kind string, opts ...crdOption) *apiextensionsv1.CustomResourceDefinition {
	singular := strings.ToLower(kind)
	plural := singular + "s"
	names := apiextensionsv1.CustomResourceDefinitionNames{
		Plural: plural, Singular: singular, Kind: kind, ListKind: kind + "List",
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, UID: types.UID("uid-" + plural + "." + group), ResourceVersion: "1"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: names,
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				testVersion("v1", true, true),
			},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			AcceptedNames: names,
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
				{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
			},
		},
	}
	for _, o := range opts {
		o(crd)
	}
	return crd
}

// testVersion is a version with a small structural schema and subresources.
func testVersion(name string, served, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
	replicas := ".spec.size"
	return apiextensionsv1.CustomResourceDefinitionVersion{
		Name:    name,
		Served:  served,
		Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type:        "object",
			Description: "A " + name + " test object.",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {
					Type:        "object",
					Description: "Spec is the desired state.",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"size": {Type: "integer", Description: "Size is how large the object is."},
					},
				},
				"status": {
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}, "ready": {Type: "boolean"}},
				},
			},
		}},
		Subresources: &apiextensionsv1.CustomResourceSubresources{
			Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
			Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: replicas, StatusReplicasPath: ".status.replicas"},
		},
	}
}

// withVersions replaces the versions.
func withVersions(versions ...apiextensionsv1.CustomResourceDefinitionVersion) crdOption {
	return func(crd *apiextensionsv1.CustomResourceDefinition) { crd.Spec.Versions = versions }
}

// withNames sets short names and categories.
func withNames(shortNames, categories []string) crdOption {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Spec.Names.ShortNames, crd.Spec.Names.Categories = shortNames, categories
		crd.Status.AcceptedNames.ShortNames, crd.Status.AcceptedNames.Categories = shortNames, categories
	}
}

// clusterScoped makes the CRD cluster-scoped.
func clusterScoped(crd *apiextensionsv1.CustomResourceDefinition) {
	crd.Spec.Scope = apiextensionsv1.ClusterScoped
}

// notEstablished clears the Established condition.
func notEstablished(crd *apiextensionsv1.CustomResourceDefinition) {
	crd.Status.Conditions = crd.Status.Conditions[:1]
}

// terminating adds the Terminating condition.
func terminating(crd *apiextensionsv1.CustomResourceDefinition) {
	crd.Status.Conditions = append(crd.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
	})
}

// withoutSubresources removes the subresources of every version.
func withoutSubresources(crd *apiextensionsv1.CustomResourceDefinition) {
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Subresources = nil
	}
}

// resourceVersion sets the resourceVersion, as an update would.
func resourceVersion(rv string) crdOption {
	return func(crd *apiextensionsv1.CustomResourceDefinition) { crd.ResourceVersion = rv }
}
