package filters

import (
	"net/http"

	"k8s.io/apiserver/pkg/audit"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// The audit annotations that name the logical cluster of a request, as kcp
// sets them.
const (
	// AuditClusterAnnotationKey holds the logical cluster's name, or "*"
	// for a request across all logical clusters.
	AuditClusterAnnotationKey = logicalcluster.AnnotationKey
	// AuditWorkspaceAnnotationKey holds the same value; kcp's older key.
	AuditWorkspaceAnnotationKey = "tenancy.kcp.io/workspace"
	// AuditPathAnnotationKey holds the canonical workspace path of the
	// logical cluster, when it has one.
	AuditPathAnnotationKey = logicalcluster.PathAnnotationKey
)

// AuditTargetFunc tells which logical cluster a request is about, and the
// cluster's canonical path ("" if it has none); false if the request is
// about none.
type AuditTargetFunc func(req *http.Request) (cluster logicalcluster.Cluster, path string, ok bool)

// RequestCluster is an AuditTargetFunc: the cluster in the request
// context, without a path.
func RequestCluster(req *http.Request) (logicalcluster.Cluster, string, bool) {
	c, ok := logicalcluster.ClusterFrom(req.Context())
	return c, "", ok
}

// WithAuditAnnotations names the logical cluster of a request in its audit
// event. It goes between the cluster filter and the generic handler chain:
// it creates the request's audit context, which the chain's WithAuditInit
// then keeps, and annotates it before authentication, so that every event
// of the request carries the cluster, that of a failed authentication too.
func WithAuditAnnotations(handler http.Handler, target AuditTargetFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		req = req.WithContext(audit.WithAuditContext(req.Context()))
		if cluster, path, ok := target(req); ok {
			name := string(cluster.Name)
			if cluster.Wildcard {
				name = string(logicalcluster.Wildcard)
			}
			if name != "" {
				audit.AddAuditAnnotations(req.Context(), AuditClusterAnnotationKey, name, AuditWorkspaceAnnotationKey, name)
			}
			if path != "" && !cluster.Wildcard {
				audit.AddAuditAnnotation(req.Context(), AuditPathAnnotationKey, path)
			}
		}
		handler.ServeHTTP(w, req)
	})
}
