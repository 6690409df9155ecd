package server

import (
	"net/http"
	"strings"

	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
)

// withVirtualWorkspaces sends requests under /services/initializingworkspaces/
// to the in-process virtual workspace, after authentication; it authorizes
// them itself (the shard's authorizer lets /services/ through).
func (s *Server) withVirtualWorkspaces(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if s.virtual != nil && strings.HasPrefix(req.URL.Path, initializingworkspaces.PathPrefix) {
			s.virtual.ServeHTTP(w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
}
