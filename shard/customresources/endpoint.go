package customresources

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// patchTypes are the patch types custom resources accept: no strategic
// merge patch, since custom resources have no patch strategies.
func patchTypes() []string {
	t := []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
	if utilfeature.DefaultFeatureGate.Enabled(features.CBORServingAndStorage) {
		t = append(t, string(types.ApplyCBORPatchType))
	}
	return t
}

// endpoint returns the endpoint handler of the request's verb and
// subresource, instrumented with the API server's request metrics.
func (h *Handler) endpoint(info *request.RequestInfo, vs *versionState, terminating bool) (http.Handler, error) {
	var (
		f   http.HandlerFunc
		err error
	)
	switch {
	case info.Subresource == "":
		f, err = h.resourceEndpoint(info, vs, terminating)
	case info.Subresource == "status" && vs.subresources != nil && vs.subresources.Status != nil:
		f, err = h.subresourceEndpoint(info, vs.storage.Status, vs.statusScope)
	case info.Subresource == "scale" && vs.subresources != nil && vs.subresources.Scale != nil:
		f, err = h.subresourceEndpoint(info, vs.storage.Scale, vs.scaleScope)
	default:
		err = apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource + "/" + info.Subresource}, info.Name)
	}
	if err != nil {
		return nil, err
	}
	return metrics.InstrumentHandlerFunc(strings.ToUpper(info.Verb), info.APIGroup, info.APIVersion, info.Resource, info.Subresource,
		metrics.CleanScope(info), metrics.APIServerComponent, vs.deprecated, "", f), nil
}

// resourceEndpoint serves the resource itself.
func (h *Handler) resourceEndpoint(info *request.RequestInfo, vs *versionState, terminating bool) (http.HandlerFunc, error) {
	store, scope := vs.storage.CustomResource, vs.scope
	admit := h.config.Admission
	if terminating {
		admit = forbidCreate{delegate: admit}
	}
	switch info.Verb {
	case "get":
		return handlers.GetResource(store, scope), nil
	case "list":
		return handlers.ListResource(store, store, scope, false, h.config.MinRequestTimeout), nil
	case "watch":
		return handlers.ListResource(store, store, scope, true, h.config.MinRequestTimeout), nil
	case "create":
		return handlers.CreateResource(store, scope, admit), nil
	case "update":
		return handlers.UpdateResource(store, scope, admit), nil
	case "patch":
		return handlers.PatchResource(store, scope, admit, patchTypes()), nil
	case "delete":
		return handlers.DeleteResource(store, true, scope, admit), nil
	case "deletecollection":
		return handlers.DeleteCollection(store, true, scope, admit), nil
	}
	return nil, apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Verb)
}

// subresourceEndpoint serves the status or scale subresource: get, update
// and patch.
func (h *Handler) subresourceEndpoint(info *request.RequestInfo, store rest.Patcher, scope *handlers.RequestScope) (http.HandlerFunc, error) {
	switch info.Verb {
	case "get":
		return handlers.GetResource(store, scope), nil
	case "update":
		return handlers.UpdateResource(store, scope, h.config.Admission), nil
	case "patch":
		return handlers.PatchResource(store, scope, h.config.Admission, patchTypes()), nil
	}
	return nil, apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource + "/" + info.Subresource}, info.Verb)
}
