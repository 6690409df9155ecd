package crds

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestManifestsAreValidCRDs checks that the API server would accept each
// manifest, structural schema included.
func TestManifestsAreValidCRDs(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apiextensions.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{PublishedResourceFile, ServiceFile} {
		t.Run(file, func(t *testing.T) {
			crd, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
			internal := &apiextensions.CustomResourceDefinition{}
			if err := scheme.Convert(crd, internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := validation.ValidateCustomResourceDefinition(t.Context(), internal); len(errs) > 0 {
				t.Fatalf("%s is not a valid CustomResourceDefinition: %v", file, errs.ToAggregate())
			}
		})
	}
}
