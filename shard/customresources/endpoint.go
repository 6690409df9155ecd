package customresources

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
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
		f, err = h.subresourceEndpoint(info, vs.status, vs.statusScope, true)
	case info.Subresource == "scale" && vs.subresources != nil && vs.subresources.Scale != nil:
		// Scale is a built-in kind: its body may be protobuf too.
		f, err = h.subresourceEndpoint(info, vs.storage.Scale, vs.scaleScope, false)
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
		return h.withObjectMediaType(scope, handlers.GetResource(store, scope)), nil
	case "list":
		return handlers.ListResource(store, store, scope, false, h.config.MinRequestTimeout), nil
	case "watch":
		return handlers.ListResource(store, store, scope, true, h.config.MinRequestTimeout), nil
	case "create":
		return h.withBodyMediaType(scope, handlers.CreateResource(store, scope, admit)), nil
	case "update":
		return h.withBodyMediaType(scope, handlers.UpdateResource(store, scope, admit)), nil
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
// and patch. customResourceBody tells whether update bodies are custom
// resources, which are never protobuf.
func (h *Handler) subresourceEndpoint(info *request.RequestInfo, store rest.Patcher, scope *handlers.RequestScope, customResourceBody bool) (http.HandlerFunc, error) {
	switch info.Verb {
	case "get":
		return h.withObjectMediaType(scope, handlers.GetResource(store, scope)), nil
	case "update":
		update := handlers.UpdateResource(store, scope, h.config.Admission)
		if customResourceBody {
			update = h.withBodyMediaType(scope, update)
		}
		return update, nil
	case "patch":
		return handlers.PatchResource(store, scope, h.config.Admission, patchTypes()), nil
	}
	return nil, apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource + "/" + info.Subresource}, info.Verb)
}

// withBodyMediaType refuses request bodies in a media type custom resources
// are not served in (protobuf) with 415 UnsupportedMediaType, as upstream
// does, before f decodes them. The scope's serializer offers protobuf for
// the meta kinds it encodes (Table, PartialObjectMetadata), but a custom
// resource cannot be decoded from it.
func (h *Handler) withBodyMediaType(scope *handlers.RequestScope, f http.HandlerFunc) http.HandlerFunc {
	body := bodySerializer{NegotiatedSerializer: scope.Serializer, mediaTypes: scope.StandardSerializers}
	return func(w http.ResponseWriter, req *http.Request) {
		if _, err := negotiation.NegotiateInputSerializer(req, false, body); err != nil {
			h.fail(w, req, scope.Kind.GroupVersion(), err)
			return
		}
		f(w, req)
	}
}

// withObjectMediaType refuses a request for one object that asks for it as
// a PartialObjectMetadataList with 406 NotAcceptable, as upstream does for
// built-in resources. Upstream's handler takes an unstructured object for
// a list (it has a list's accessors) and fails with a 500 instead.
func (h *Handler) withObjectMediaType(scope *handlers.RequestScope, f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if opts, _, err := negotiation.NegotiateOutputMediaType(req, scope.Serializer, scope); err == nil &&
			opts.Convert != nil && opts.Convert.Kind == "PartialObjectMetadataList" {
			h.fail(w, req, scope.Kind.GroupVersion(), &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
				Message: "you requested PartialObjectMetadataList, but the requested object is not a list",
			}})
			return
		}
		f(w, req)
	}
}

// bodySerializer is a NegotiatedSerializer restricted to the media types
// of custom resource bodies.
type bodySerializer struct {
	runtime.NegotiatedSerializer
	mediaTypes []runtime.SerializerInfo
}

func (s bodySerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.mediaTypes }
