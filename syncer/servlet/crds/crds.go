// Package crds holds the CustomResourceDefinitions of the servlet's APIs
// and applies them: PublishedResource on the service cluster, Service in
// the service owner's platform workspace. Both are written by hand beside
// their Go types in pkg/apis/services and pkg/apis/kdpcore.
package crds

import (
	"context"
	"embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var manifests embed.FS

const (
	// PublishedResourceFile is the manifest of the PublishedResource CRD.
	PublishedResourceFile = "services.kdp.k8c.io_publishedresources.yaml"
	// ServiceFile is the manifest of the Service CRD.
	ServiceFile = "core.kdp.k8c.io_services.yaml"
)

// Load returns the CustomResourceDefinition of a manifest of this package.
func Load(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := manifests.ReadFile(file)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", file, err)
	}
	return crd, nil
}

// Ensure creates the CustomResourceDefinition of a manifest of this
// package, or updates its spec if it differs, and waits for nothing: the
// caller's informers wait for the resource to be served.
func Ensure(ctx context.Context, client apiextensionsclient.CustomResourceDefinitionsGetter, file string) error {
	want, err := Load(file)
	if err != nil {
		return err
	}
	crds := client.CustomResourceDefinitions()
	have, err := crds.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := crds.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CustomResourceDefinition %s: %w", want.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading CustomResourceDefinition %s: %w", want.Name, err)
	}
	if sameVersions(have, want) {
		return nil
	}
	have = have.DeepCopy()
	have.Spec = want.Spec
	if _, err := crds.Update(ctx, have, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating CustomResourceDefinition %s: %w", want.Name, err)
	}
	return nil
}

// sameVersions tells whether have already serves want's names and versions
// with want's schemas; the API server's defaulting makes a deep comparison
// of whole specs useless.
func sameVersions(have, want *apiextensionsv1.CustomResourceDefinition) bool {
	if have.Spec.Names.Kind != want.Spec.Names.Kind || len(have.Spec.Versions) != len(want.Spec.Versions) {
		return false
	}
	for i, v := range want.Spec.Versions {
		h := have.Spec.Versions[i]
		if h.Name != v.Name || h.Served != v.Served || h.Storage != v.Storage {
			return false
		}
		hs, _ := yaml.Marshal(h.Schema)
		ws, _ := yaml.Marshal(v.Schema)
		if string(hs) != string(ws) {
			return false
		}
	}
	return true
}
