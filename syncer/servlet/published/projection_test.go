package published

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

// certificateCRD is a cert-manager-like CRD with two versions.
func certificateCRD() *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"secretName": {Type: "string"}}},
		},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "certificates.cert-manager.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cert-manager.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "Certificate", ListKind: "CertificateList", Plural: "certificates", Singular: "certificate",
				ShortNames: []string{"cert", "certs"}, Categories: []string{"cert-manager"},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1alpha2", Served: true, Schema: schema},
				{Name: "v1", Served: true, Storage: true, Schema: schema, Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}},
			},
		},
	}
}

func publish(p *servicesv1alpha1.ResourceProjection) *servicesv1alpha1.PublishedResource {
	return &servicesv1alpha1.PublishedResource{Spec: servicesv1alpha1.PublishedResourceSpec{
		Resource:   servicesv1alpha1.SourceResourceDescriptor{APIGroup: "cert-manager.io", Version: "v1", Kind: "Certificate"},
		Projection: p,
	}}
}

func TestProject(t *testing.T) {
	tests := []struct {
		name       string
		projection *servicesv1alpha1.ResourceProjection
		wantName   string
		wantNames  apiextensionsv1.CustomResourceDefinitionNames
		wantScope  apiextensionsv1.ResourceScope
		wantVer    string
	}{
		{
			name:     "no projection: the CRD's names in the Service's group",
			wantName: "certificates.certs.example.corp",
			wantNames: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "Certificate", ListKind: "CertificateList", Plural: "certificates", Singular: "certificate",
				ShortNames: []string{"cert", "certs"}, Categories: []string{"cert-manager"},
			},
			wantScope: apiextensionsv1.NamespaceScoped,
			wantVer:   "v1",
		},
		{
			name:       "the seed's Zertifikat: plural given in capitals, short names replaced, categories copied",
			projection: &servicesv1alpha1.ResourceProjection{Version: "v1beta1", Kind: "Zertifikat", Plural: "Zertifikate", ShortNames: []string{"zerts"}},
			wantName:   "zertifikate.certs.example.corp",
			wantNames: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "Zertifikat", ListKind: "ZertifikatList", Plural: "zertifikate", Singular: "zertifikat",
				ShortNames: []string{"zerts"}, Categories: []string{"cert-manager"},
			},
			wantScope: apiextensionsv1.NamespaceScoped,
			wantVer:   "v1beta1",
		},
		{
			name:       "plural computed from a new kind; scope changed; categories emptied",
			projection: &servicesv1alpha1.ResourceProjection{Kind: "Policy", Categories: []string{}, Scope: apiextensionsv1.ClusterScoped},
			wantName:   "policies.certs.example.corp",
			wantNames: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "Policy", ListKind: "PolicyList", Plural: "policies", Singular: "policy",
				ShortNames: []string{"cert", "certs"}, Categories: []string{},
			},
			wantScope: apiextensionsv1.ClusterScoped,
			wantVer:   "v1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := certificateCRD()
			got, err := Project(crd, publish(tt.projection), "certs.example.corp")
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.wantName || got.Spec.Group != "certs.example.corp" || got.Spec.Scope != tt.wantScope {
				t.Errorf("got %s in %s, %s; want %s in certs.example.corp, %s", got.Name, got.Spec.Group, got.Spec.Scope, tt.wantName, tt.wantScope)
			}
			if diff := cmp.Diff(tt.wantNames, got.Spec.Names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if len(got.Spec.Versions) != 1 || got.Spec.Versions[0].Name != tt.wantVer || !got.Spec.Versions[0].Storage {
				t.Fatalf("versions = %+v, want only %s, stored", got.Spec.Versions, tt.wantVer)
			}
			if got.Spec.Versions[0].Subresources == nil || got.Spec.Versions[0].Schema == nil {
				t.Errorf("the published version lost its schema or subresources")
			}
			if !cmp.Equal(crd, certificateCRD()) {
				t.Errorf("Project changed the CRD it was given")
			}
		})
	}
	if _, err := Project(certificateCRD(), &servicesv1alpha1.PublishedResource{Spec: servicesv1alpha1.PublishedResourceSpec{
		Resource: servicesv1alpha1.SourceResourceDescriptor{APIGroup: "cert-manager.io", Version: "v9", Kind: "Certificate"},
	}}, "certs.example.corp"); err == nil {
		t.Errorf("Project of a version the CRD lacks succeeded")
	}
}

func TestHasStatusSubresource(t *testing.T) {
	crd := certificateCRD()
	if !HasStatusSubresource(crd, "v1") || HasStatusSubresource(crd, "v1alpha2") || HasStatusSubresource(crd, "v9") {
		t.Errorf("HasStatusSubresource: want true only for v1")
	}
}
