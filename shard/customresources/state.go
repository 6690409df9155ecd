package customresources

import (
	"context"
	"k8s.io/apiserver/pkg/registry/rest"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiserver/pkg/endpoints/handlers"
)

// servingState is everything needed to serve one CRD of one logical
// cluster (or, for wildcard requests, of all clusters): per version, the
// stores and the request scopes of the resource and its subresources.
type servingState struct {
	// versions holds every served version.
	versions map[string]*versionState

	// ctx ends when the state leaves the cache; watches served from the
	// state end with it, so they do not outlive its stores.
	ctx    context.Context
	cancel context.CancelFunc
}

// versionState serves one version of a CRD.
type versionState struct {
	storage customresource.CustomResourceStorage
	// status serves the status subresource: storage.Status, or its
	// replacement for a CRD of the core group (useCoreTypeMeta).
	status       rest.Patcher
	scope        *handlers.RequestScope
	statusScope  *handlers.RequestScope
	scaleScope   *handlers.RequestScope
	subresources *apiextensionsv1.CustomResourceSubresources
	// deprecated and warnings come from the version's deprecation fields.
	deprecated bool
	warnings   []string
}

var _ releasable = &servingState{}

// stop ends the watches served from the state.
func (s *servingState) stop() { s.cancel() }

// destroy frees the stores. Subresource stores share the main store's
// storage, so only the main stores are destroyed.
func (s *servingState) destroy() {
	s.cancel()
	for _, v := range s.versions {
		v.storage.CustomResource.Destroy()
	}
}
