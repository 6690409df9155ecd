package discovery

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

// writeError writes err as a Kubernetes Status, negotiated with the client.
func (h *Handler) writeError(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, h.serializer, schema.GroupVersion{Version: "v1"}, w, req)
}

// notFound is the error for a discovery or OpenAPI path the logical cluster
// does not serve, worded like the generic server's.
func notFound() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "get", schema.GroupResource{}, "", "", 0, false)
}

// internalError wraps a failure to compute a document.
func internalError(err error) error {
	return apierrors.NewInternalError(err)
}

// notAcceptable is the error for an OpenAPI request in a media type that is
// not served.
func notAcceptable(accept string) error {
	return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "get", schema.GroupResource{}, "", fmt.Sprintf("only application/json and protobuf are served, not %q", accept), 0, false)
}
