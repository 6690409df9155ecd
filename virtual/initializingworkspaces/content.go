package initializingworkspaces

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/transport"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

const (
	// initializerUserPrefix prefixes the user the content proxy
	// impersonates for an initializer: system:kcp:initializer:<initializer>.
	initializerUserPrefix = "system:kcp:initializer:"

	// workspaceAdminGroup is the group the content proxy impersonates. The
	// shard lets its members into logical clusters that are not Ready yet
	// and makes them cluster-admin there; only system:masters, such as the
	// loopback user, may impersonate it.
	workspaceAdminGroup = "system:kcp:clusterworkspace:admin"
)

// initializerIdentity is who the content proxy acts as for an initializer.
func initializerIdentity(in corev1alpha1.LogicalClusterInitializer) transport.ImpersonationConfig {
	return transport.ImpersonationConfig{
		UserName: initializerUserPrefix + string(in),
		Groups:   []string{workspaceAdminGroup, user.AllAuthenticated},
	}
}

// serveContent forwards a request for the content of a logical cluster
// while it waits for the initializer, impersonating the initializer as an
// administrator of the workspace (not as the shard admin, so that the
// shard's rules for everyone but system:masters hold).
func (h *handler) serveContent(w http.ResponseWriter, req *http.Request, t target) {
	if err := checkContent(req.Method, t.segments); err != nil {
		h.writeError(w, req, err)
		return
	}
	pending, err := h.pending(req.Context(), t.cluster.Name, t.initializer)
	switch {
	case err != nil:
		h.writeError(w, req, err)
		return
	case !pending:
		h.writeError(w, req, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure,
			Code:   http.StatusForbidden,
			Reason: metav1.StatusReasonForbidden,
			Message: fmt.Sprintf("initializer %q cannot access logical cluster %q: it does not wait for this initializer (any more)",
				t.initializer, t.cluster.Name),
			Details: &metav1.StatusDetails{Name: string(t.cluster.Name), Group: corev1alpha1.GroupName, Kind: logicalClustersResource},
		}})
		return
	}
	rt := transport.NewImpersonatingRoundTripper(initializerIdentity(t.initializer), h.transport)
	h.proxy(w, req, rt, t.clusterPath()+t.restPath(), req.URL.RawQuery)
}

// checkContent decides whether the content proxy serves a request, from
// its method and the segments of its path inside the logical cluster:
// resource requests under /api/<version>/ and /apis/<group>/<version>/, and
// reads of discovery (/api, /api/<version>, /apis, /apis/<group>,
// /apis/<group>/<version>), /openapi/... and /version. LogicalClusters
// have their own endpoints and are refused.
func checkContent(method string, segments []string) error {
	if len(segments) == 0 {
		return errPathNotFound()
	}
	read := method == http.MethodGet || method == http.MethodHead
	discovery := false
	switch segments[0] {
	case "api":
		discovery = len(segments) <= 2
	case "apis":
		discovery = len(segments) <= 3
		if !discovery && segments[1] == corev1alpha1.GroupName && resourceOf(segments[3:]) == logicalClustersResource {
			return apierrors.NewForbidden(logicalClustersGR, "", errors.New(
				"LogicalClusters are not served through the content of a logical cluster: use .../clusters/<name>/apis/core.kcp.io/v1alpha1/logicalclusters/cluster of the virtual workspace"))
		}
	case "openapi":
		discovery = len(segments) >= 2
		if !discovery {
			return errPathNotFound()
		}
	case "version":
		discovery = len(segments) == 1
		if !discovery {
			return errPathNotFound()
		}
	default:
		return errPathNotFound()
	}
	if discovery && !read {
		return methodNotAllowed(method)
	}
	return nil
}

// resourceOf returns the resource of the path of a resource request after
// /api/<version> or /apis/<group>/<version>, as the API server's request
// info reads it: [proxy|watch/][namespaces/<namespace>/]<resource>/...
func resourceOf(parts []string) string {
	if len(parts) >= 2 && (parts[0] == "watch" || parts[0] == "proxy") {
		parts = parts[1:]
	}
	if len(parts) > 2 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return ""
	}
	return parts[0]
}
