package filters

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ExistsFunc tells whether a logical cluster exists on this shard.
type ExistsFunc func(logicalcluster.Name) (bool, error)

// alwaysServed are the non-resource paths answered for any cluster name.
var alwaysServed = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// WithClusterGuard refuses requests to logical clusters that do not exist,
// except a shard admin creating the cluster's LogicalCluster, and limits
// requests across all clusters to list and watch of whole resources. It runs
// after authentication and RequestInfo.
func WithClusterGuard(handler http.Handler, exists ExistsFunc, codecs runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		cluster, ok := logicalcluster.ClusterFrom(ctx)
		info, hasInfo := request.RequestInfoFrom(ctx)
		if !ok || !hasInfo {
			responsewriters.ErrorNegotiated(apierrors.NewInternalError(fmt.Errorf("no logical cluster or request info")), codecs, schemaless, w, req)
			return
		}
		if alwaysServed[req.URL.Path] {
			handler.ServeHTTP(w, req)
			return
		}
		if cluster.Wildcard {
			if err := wildcardAllowed(info); err != nil {
				responsewriters.ErrorNegotiated(err, codecs, schemaless, w, req)
				return
			}
			handler.ServeHTTP(w, req)
			return
		}
		found, err := exists(cluster.Name)
		if err != nil {
			responsewriters.ErrorNegotiated(apierrors.NewServiceUnavailable(fmt.Sprintf("cannot tell whether logical cluster %q exists: %v", cluster.Name, err)), codecs, schemaless, w, req)
			return
		}
		if !found && !createsLogicalCluster(req, info) {
			responsewriters.ErrorNegotiated(&apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
				Message: fmt.Sprintf("logical cluster %q does not exist", cluster.Name),
				Details: &metav1.StatusDetails{Name: string(cluster.Name), Group: "core.kcp.io", Kind: "logicalclusters"},
			}}, codecs, schemaless, w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
}

func wildcardAllowed(info *request.RequestInfo) error {
	if !info.IsResourceRequest {
		if info.Verb != "get" {
			return apierrors.NewBadRequest("only reads are allowed across all logical clusters")
		}
		return nil
	}
	if info.Verb != "list" && info.Verb != "watch" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s is not allowed across all logical clusters: only list and watch are", info.Verb))
	}
	if info.Namespace != "" {
		return apierrors.NewBadRequest("a request across all logical clusters cannot be limited to a namespace")
	}
	return nil
}

// createsLogicalCluster tells whether the request is a shard admin creating
// (or reading, to adopt) the LogicalCluster that brings a cluster into being.
func createsLogicalCluster(req *http.Request, info *request.RequestInfo) bool {
	if !info.IsResourceRequest || info.APIGroup != "core.kcp.io" || info.Resource != "logicalclusters" || info.Subresource != "" {
		return false
	}
	if info.Verb != "create" && info.Verb != "get" {
		return false
	}
	u, ok := request.UserFrom(req.Context())
	return ok && isMaster(u)
}

func isMaster(u user.Info) bool {
	for _, g := range u.GetGroups() {
		if g == user.SystemPrivilegedGroup {
			return true
		}
	}
	return false
}
