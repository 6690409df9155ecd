// Package filters holds the shard's HTTP filters that make one server serve
// many logical clusters.
package filters

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ClusterPrefix is the path prefix that addresses a logical cluster.
const ClusterPrefix = "/clusters/"

// WithCluster strips /clusters/<name> from the path and puts the cluster in
// the request context, so everything after it sees a normal Kubernetes path.
// Requests without the prefix address the shard-local system:admin cluster.
func WithCluster(handler http.Handler, codecs runtime.NegotiatedSerializer) http.Handler {
	return WithClusterResolver(handler, codecs, nil)
}

// ResolveFunc maps a workspace path (root:org:team) to the name of its
// logical cluster, if it is known on this shard.
type ResolveFunc func(path logicalcluster.Path) (logicalcluster.Name, bool)

// WithClusterResolver is WithCluster that also accepts workspace paths:
// /clusters/root:org:team addresses the logical cluster resolve maps the
// path to. Names of logical clusters (one segment, or system:*) are taken
// as they are; a path resolve does not know is taken as a name, which
// then does not exist.
func WithClusterResolver(handler http.Handler, codecs runtime.NegotiatedSerializer, resolve ResolveFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		cluster, rest, err := parse(req.URL.Path)
		if err != nil {
			responsewriters.ErrorNegotiated(err, codecs, schemaless, w, req)
			return
		}
		if resolve != nil && !cluster.Wildcard && strings.Contains(string(cluster.Name), ":") && !cluster.Name.IsSystem() {
			if name, ok := resolve(cluster.Name.Path()); ok {
				cluster.Path, cluster.Name = string(cluster.Name), name
			}
		}
		if rest != req.URL.Path {
			r := req.Clone(logicalcluster.WithCluster(req.Context(), cluster))
			r.URL.Path = rest
			r.URL.RawPath = ""
			r.RequestURI = rest
			if r.URL.RawQuery != "" {
				r.RequestURI += "?" + r.URL.RawQuery
			}
			req = r
		} else {
			req = req.WithContext(logicalcluster.WithCluster(req.Context(), cluster))
		}
		handler.ServeHTTP(w, req)
	})
}

// parse splits a request path into its cluster and the path within it.
func parse(path string) (logicalcluster.Cluster, string, error) {
	if !strings.HasPrefix(path, ClusterPrefix) {
		if path == "/clusters" {
			return logicalcluster.Cluster{}, "", apierrors.NewBadRequest("a logical cluster name is required after /clusters/")
		}
		return logicalcluster.Cluster{Name: logicalcluster.SystemAdmin}, path, nil
	}
	rest := path[len(ClusterPrefix):]
	name, rest, _ := strings.Cut(rest, "/")
	rest = "/" + rest
	if name == string(logicalcluster.Wildcard) {
		return logicalcluster.Cluster{Wildcard: true}, rest, nil
	}
	if !logicalcluster.IsValidPath(name) {
		return logicalcluster.Cluster{}, "", apierrors.NewBadRequest(fmt.Sprintf("invalid logical cluster name %q: %s", name, logicalcluster.ValidationMessage))
	}
	return logicalcluster.Cluster{Name: logicalcluster.Name(name)}, rest, nil
}
