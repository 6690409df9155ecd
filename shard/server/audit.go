package server

import (
	"net/http"
	"strings"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
)

// auditTarget names the logical cluster of a request in its audit event
// (filters.WithAuditAnnotations): the request's cluster, or for the
// in-process virtual workspaces, which are served at the shard's base URL,
// the cluster in their path (the consumer, for the apiexport one); with the canonical path of the cluster's
// LogicalCluster, read from the informer.
func (s *Server) auditTarget(req *http.Request) (logicalcluster.Cluster, string, bool) {
	c, ok := logicalcluster.ClusterFrom(req.Context())
	if !ok {
		return c, "", false
	}
	if c.Name == logicalcluster.SystemAdmin && strings.HasPrefix(req.URL.Path, initializingworkspaces.PathPrefix) {
		if vc, ok := initializingworkspaces.ClusterOf(req); ok {
			c = vc
		}
	}
	if c.Name == logicalcluster.SystemAdmin && strings.HasPrefix(req.URL.Path, apiexportvw.PathPrefix) {
		if vc, ok := apiexportvw.ClusterOf(req); ok {
			c = vc
		}
	}
	if c.Wildcard || c.Name.Empty() {
		return c, "", true
	}
	lc, err := s.logicalClusters.Lister().Cluster(c.Name).Get(corev1alpha1.LogicalClusterName)
	if err != nil {
		return c, "", true
	}
	return c, lc.GetAnnotations()[logicalcluster.PathAnnotationKey], true
}
