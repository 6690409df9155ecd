package filters

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// WithNameValidation answers 400 to a resource request whose namespace or
// name in the path cannot be part of a storage key ("." and "..", or
// anything with "/" or "%"), before it reaches storage, which would fail
// with an internal error that shows its key layout. It runs after
// RequestInfo.
func WithNameValidation(handler http.Handler, codecs runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := request.RequestInfoFrom(req.Context())
		if !ok || !info.IsResourceRequest {
			handler.ServeHTTP(w, req)
			return
		}
		for _, seg := range [...]struct{ what, value string }{{"namespace", info.Namespace}, {"name", info.Name}} {
			if seg.value == "" {
				continue
			}
			if msgs := path.IsValidPathSegmentName(seg.value); len(msgs) > 0 {
				responsewriters.ErrorNegotiated(apierrors.NewBadRequest(fmt.Sprintf("invalid %s %q: %s", seg.what, seg.value, strings.Join(msgs, "; "))),
					codecs, schemaless, w, req)
				return
			}
		}
		handler.ServeHTTP(w, req)
	})
}
