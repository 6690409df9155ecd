package customresources

import (
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// checkWildcard refuses what a request across all logical clusters may not
// do: anything but listing or watching a whole resource.
func checkWildcard(info *request.RequestInfo) error {
	if (info.Verb != "list" && info.Verb != "watch") || info.Subresource != "" {
		return apierrors.NewBadRequest("only list and watch of whole resources are allowed across all logical clusters")
	}
	return nil
}

// servable tells whether crd serves the request at all; when it does not,
// the request gets 404 as if the resource did not exist, like upstream:
// the CRD is not Established yet, the version is not served, or the
// request's scope does not match the CRD's (list and watch of a namespaced
// resource may span all namespaces).
func servable(crd *apiextensionsv1.CustomResourceDefinition, info *request.RequestInfo) bool {
	if !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		return false
	}
	if !apiextensionshelpers.HasServedCRDVersion(crd, info.APIVersion) {
		return false
	}
	namespacedCRD := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	namespacedRequest := info.Namespace != ""
	switch {
	case !namespacedCRD && namespacedRequest:
		return false
	case namespacedCRD && !namespacedRequest && info.Verb != "list" && info.Verb != "watch":
		return false
	}
	return true
}
