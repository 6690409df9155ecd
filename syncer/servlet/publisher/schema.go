package publisher

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

// SchemaFor returns the APIResourceSchema that publishes pr's version of
// crd in the Service's API group apiGroup, projected. Its name is
// <prefix>.<plural>.<apiGroup> with a prefix hashed from the projected
// definition: the same CRD and projection always give the same name, any
// change a new one (APIResourceSchemas are immutable).
func SchemaFor(crd *apiextensionsv1.CustomResourceDefinition, pr *servicesv1alpha1.PublishedResource, apiGroup string) (*apisv1alpha1.APIResourceSchema, error) {
	projected, err := published.Project(crd, pr, apiGroup)
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(projected.Spec)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(spec)
	schema, err := apisv1alpha1.SchemaFromCRD(projected, "v"+hex.EncodeToString(sum[:5]))
	if err != nil {
		return nil, err
	}
	schema.Labels = map[string]string{LabelPublishedResource: pr.Name}
	return schema, nil
}

// LabelPublishedResource is the label of an APIResourceSchema that names
// the PublishedResource it was made for.
const LabelPublishedResource = "services.kdp.k8c.io/published-resource"
