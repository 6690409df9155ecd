package server

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// TestCRDLookupIsPerCluster puts the same CRD name, with different scopes,
// in clusters whose names share prefixes, and checks that each lookup of a
// cluster finds that cluster's CRD only, and that the lookup across all
// clusters finds every one.
func TestCRDLookupIsPerCluster(t *testing.T) {
	inf := informers.NewSharedIndexInformer(nil, &apiextensionsv1.CustomResourceDefinition{}, 0, cache.Indexers{byCRDName: crdNameIndex})
	clusters := map[logicalcluster.Name]apiextensionsv1.ResourceScope{
		"a": apiextensionsv1.NamespaceScoped, "a-b": apiextensionsv1.ClusterScoped, "ab": apiextensionsv1.ClusterScoped, "a:b": apiextensionsv1.NamespaceScoped,
	}
	for c, scope := range clusters {
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", Annotations: map[string]string{logicalcluster.AnnotationKey: string(c)}},
			Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: scope, Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets"}},
		}
		if err := inf.GetIndexer().Add(crd); err != nil {
			t.Fatal(err)
		}
	}
	other := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com", Annotations: map[string]string{logicalcluster.AnnotationKey: "a-b"}}}
	if err := inf.GetIndexer().Add(other); err != nil {
		t.Fatal(err)
	}
	s := &Server{crds: informers.NewInformer[*apiextensionsv1.CustomResourceDefinition](inf, apiextensionsv1.Resource("customresourcedefinitions"))}

	for c, scope := range clusters {
		crd, err := s.crdFor(c, "example.com", "widgets")
		if err != nil {
			t.Fatalf("crdFor(%s): %v", c, err)
		}
		if got := logicalcluster.From(crd); got != c || crd.Spec.Scope != scope {
			t.Errorf("crdFor(%s) found the CRD of %s (scope %s)", c, got, crd.Spec.Scope)
		}
		all, err := s.crdsOf(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, crd := range all {
			if logicalcluster.From(crd) != c {
				t.Errorf("crdsOf(%s) lists %s of %s", c, crd.Name, logicalcluster.From(crd))
			}
		}
	}
	if _, err := s.crdFor("a", "example.com", "gadgets"); !apierrors.IsNotFound(err) {
		t.Errorf("crdFor(a, gadgets), which only a-b has: err = %v, want NotFound", err)
	}
	named, err := s.crdsNamed("example.com", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, crd := range named {
		got = append(got, string(logicalcluster.From(crd)))
	}
	slices.Sort(got)
	if want := []string{"a", "a-b", "a:b", "ab"}; !slices.Equal(got, want) {
		t.Errorf("crdsNamed(widgets) in clusters %v, want %v", got, want)
	}
}
