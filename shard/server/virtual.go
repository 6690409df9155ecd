package server

import (
	"net/http"
	"strings"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
	syncervw "github.com/tessera-dev/tessera/virtual/syncer"
)

// withVirtualWorkspaces sends requests under
// /services/initializingworkspaces/, /services/apiexport/,
// /services/syncer/ and /services/upsyncer/ at the shard's base URL to the
// in-process virtual workspaces, after authentication; it authorizes them itself (the shard's authorizer lets
// them through).
func (s *Server) withVirtualWorkspaces(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		cluster, _ := logicalcluster.ClusterFrom(req.Context())
		if s.virtual != nil && cluster.Name == logicalcluster.SystemAdmin && strings.HasPrefix(req.URL.Path, initializingworkspaces.PathPrefix) {
			s.virtual.ServeHTTP(w, req)
			return
		}
		if s.apiExportVirtual != nil && cluster.Name == logicalcluster.SystemAdmin && strings.HasPrefix(req.URL.Path, apiexportvw.PathPrefix) {
			s.apiExportVirtual.ServeHTTP(w, req)
			return
		}
		if s.syncerVirtual != nil && cluster.Name == logicalcluster.SystemAdmin && syncervw.Handles(req.URL.Path) {
			s.syncerVirtual.ServeHTTP(w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
}
