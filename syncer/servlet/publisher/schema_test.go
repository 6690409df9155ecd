package publisher

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

func TestSchemaFor(t *testing.T) {
	crd := func(field string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "certificates.cert-manager.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "cert-manager.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Certificate", ListKind: "CertificateList", Plural: "certificates", Singular: "certificate"},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "string"}}},
				}}},
			},
		}
	}
	pr := &servicesv1alpha1.PublishedResource{
		ObjectMeta: metav1.ObjectMeta{Name: "certs"},
		Spec: servicesv1alpha1.PublishedResourceSpec{
			Resource:   servicesv1alpha1.SourceResourceDescriptor{APIGroup: "cert-manager.io", Version: "v1", Kind: "Certificate"},
			Projection: &servicesv1alpha1.ResourceProjection{Kind: "Zertifikat", Version: "v1beta1"},
		},
	}
	a, err := SchemaFor(crd("spec"), pr, "certs.example.corp")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(a.Name, ".zertifikats.certs.example.corp") || a.Labels[LabelPublishedResource] != "certs" {
		t.Errorf("schema %s labels %v, want <prefix>.zertifikats.certs.example.corp labelled with its PublishedResource", a.Name, a.Labels)
	}
	if again, _ := SchemaFor(crd("spec"), pr, "certs.example.corp"); again.Name != a.Name {
		t.Errorf("the same CRD and projection gave %s, then %s", a.Name, again.Name)
	}
	if changed, _ := SchemaFor(crd("status"), pr, "certs.example.corp"); changed.Name == a.Name {
		t.Errorf("a changed CRD kept the schema name %s", a.Name)
	}
}
