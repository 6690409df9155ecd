package server

import (
	"net/http"
	"strings"

	"github.com/tessera-dev/tessera/shard/authorization"
)

// withVirtualWorkspaces sends requests under /services/ to the in-process
// virtual workspaces, after authentication; they authorize themselves.
func (s *Server) withVirtualWorkspaces(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if s.virtual != nil && strings.HasPrefix(req.URL.Path, authorization.VirtualWorkspacePrefix) {
			s.virtual.ServeHTTP(w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
}
