package filters

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

// WithResourceVersionValidation answers 400 to a request whose
// resourceVersion parameter is not a resourceVersion this server issues
// (a decimal etcd revision), before it reaches storage, where some paths
// would report it as an internal error. etcd revisions are signed 64-bit
// integers, so a number beyond that range can never be reached: storage
// would turn it into a negative revision, and waiting for it would never
// end.
func WithResourceVersionValidation(handler http.Handler, codecs runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, rv := range req.URL.Query()["resourceVersion"] {
			if rv == "" {
				continue
			}
			if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
				responsewriters.ErrorNegotiated(apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: it must be a non-negative integer", rv)), codecs, schemaless, w, req)
				return
			}
			if _, err := strconv.ParseInt(rv, 10, 64); err != nil {
				responsewriters.ErrorNegotiated(apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: it is larger than any revision etcd can reach (%d)", rv, int64(math.MaxInt64))), codecs, schemaless, w, req)
				return
			}
		}
		handler.ServeHTTP(w, req)
	})
}
