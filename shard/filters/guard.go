package filters

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
)

// ClusterState is what the guard needs to know of a logical cluster.
type ClusterState struct {
	// Exists: its LogicalCluster exists on this shard.
	Exists bool
	// Deleting: its LogicalCluster has a deletionTimestamp.
	Deleting bool
}

// StateFunc tells the state of a logical cluster on this shard.
type StateFunc func(logicalcluster.Name) (ClusterState, error)

// alwaysServed are the non-resource paths answered for any cluster name.
var alwaysServed = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// WithClusterGuard refuses requests to logical clusters that do not exist,
// except a shard admin creating the cluster's LogicalCluster; refuses writes
// other than deletions to a cluster that is being deleted, so nothing
// outlives it; and limits requests across all clusters to list and watch of
// whole resources. It runs after authentication and RequestInfo.
func WithClusterGuard(handler http.Handler, state StateFunc, codecs runtime.NegotiatedSerializer) http.Handler {
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
		st, err := state(cluster.Name)
		if err != nil {
			responsewriters.ErrorNegotiated(apierrors.NewServiceUnavailable(fmt.Sprintf("cannot tell whether logical cluster %q exists: %v", cluster.Name, err)), codecs, schemaless, w, req)
			return
		}
		if st.Exists && st.Deleting && writesContent(req, info) {
			responsewriters.ErrorNegotiated(&apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
				Message: fmt.Sprintf("logical cluster %q is being deleted: nothing new can be written to it", cluster),
				Details: &metav1.StatusDetails{Name: string(cluster.Name), Group: "core.kcp.io", Kind: "logicalclusters"},
			}}, codecs, schemaless, w, req)
			return
		}
		if !st.Exists && !bringsClusterIntoBeing(req, info) {
			responsewriters.ErrorNegotiated(&apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
				Message: fmt.Sprintf("logical cluster %q does not exist", cluster),
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

// bringsClusterIntoBeing tells whether the request is a shard admin
// creating (or reading, to adopt) the LogicalCluster that brings a cluster
// into being, or reading the discovery and OpenAPI documents a client needs
// to do so (kubectl create -f).
func bringsClusterIntoBeing(req *http.Request, info *request.RequestInfo) bool {
	u, ok := request.UserFrom(req.Context())
	if !ok || !shardadmin.Is(u) {
		return false
	}
	if !info.IsResourceRequest {
		return info.Verb == "get"
	}
	if info.APIGroup != "core.kcp.io" || info.Resource != "logicalclusters" || info.Subresource != "" {
		return false
	}
	return info.Verb == "create" || info.Verb == "get"
}

// writesContent tells whether a request adds or changes content of a
// cluster: everything but reads, deletions, requests on the LogicalCluster
// itself (its finalizer is removed when deletion is done), updates and
// patches of existing objects (the controllers of objects with finalizers
// remove them while the cluster's content is deleted, as they do in a
// terminating namespace) and updates of Workspaces by shard admins (their
// finalizers are removed when their own logical clusters are gone).
// Server-side apply is refused: it may create. The few registries that
// create on update can still add an object; the deletion reads the
// cluster's content again before each range delete and finds it.
func writesContent(req *http.Request, info *request.RequestInfo) bool {
	if !info.IsResourceRequest {
		return info.Verb != "get" && info.Verb != "head"
	}
	switch info.Verb {
	case "get", "list", "watch", "delete", "deletecollection":
		return false
	}
	if info.APIGroup == "core.kcp.io" && info.Resource == "logicalclusters" {
		return false
	}
	// Child workspaces are deleted before their parent's content: the
	// shard's controllers write their finalizers and status until they are
	// gone. Nobody else changes them any more.
	if info.APIGroup == "tenancy.kcp.io" && info.Resource == "workspaces" && (info.Verb == "update" || info.Verb == "patch") {
		u, ok := request.UserFrom(req.Context())
		return !ok || !shardadmin.Is(u) || strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch")
	}
	switch info.Verb {
	case "update":
		return false
	case "patch":
		return strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch")
	}
	return true
}
