package server

import (
	"net/http"

	restful "github.com/emicklei/go-restful/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tessera-dev/tessera/shard/customresources"
)

// delegateUnroutable hands the resource requests that the generic server's
// go-restful container finds no route for to notFound, the custom resource
// handler, as the generic server already does for paths outside go-restful.
//
// The generic server installs a go-restful web service at /apis/<group> for
// the discovery document of every built-in group, and its director sends
// every path below a web service's root to go-restful. So a request for
// /apis/<built-in group>/<any version>/... never reaches the NotFound
// delegate: go-restful answers 404. kube-apiserver (v1.37.0, checked) has
// the same chain, and there a CRD of a built-in group (coordination.k8s.io,
// with the api-approved.kubernetes.io annotation) that adds a version is
// advertised in /apis/<group> and aggregated discovery but answers 404 even
// to a list, and one in a built-in group version is neither advertised nor
// served. Tessera serves both: the resources go-restful has no route for are
// exactly those the built-in group does not serve, and the custom resource
// handler answers them from the cluster's CRDs, or with 404 like any
// unknown resource. A CRD cannot take a built-in resource's name (the CRD
// naming controller refuses it), so routed requests are never ambiguous.
//
// The same holds for the core group: go-restful's web service at /api/v1
// answers 404 for every resource it does not serve, and a logical cluster
// bound to an APIExport of core resources (kcp's compute export kubernetes:
// Services, Pods, Endpoints) serves those from bound CRDs of group "", at
// /api/v1 as kcp does, across clusters too (/clusters/*/api/v1/<resource>:
// <identity>).
//
// Only resource requests of named groups and of core v1, the only ones a
// CRD can serve, are handed on; other errors of route selection (404 for
// non-resource paths, 405, 406, 415) are written as the generic server
// writes them.
func delegateUnroutable(container *restful.Container, notFound http.Handler, serializer runtime.NegotiatedSerializer) {
	container.ServiceErrorHandler(func(err restful.ServiceError, req *restful.Request, resp *restful.Response) {
		info, ok := request.RequestInfoFrom(req.Request.Context())
		if err.Code == http.StatusNotFound && ok && info.IsResourceRequest && customresources.ServesPath(info) {
			notFound.ServeHTTP(resp.ResponseWriter, req.Request)
			return
		}
		responsewriters.ErrorNegotiated(
			apierrors.NewGenericServerResponse(err.Code, "", schema.GroupResource{}, "", err.Message, 0, false),
			serializer, schema.GroupVersion{}, resp, req.Request)
	})
}
