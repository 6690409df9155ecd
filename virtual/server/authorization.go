package server

import (
	"context"
	"strings"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/shardadmin"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
	syncervw "github.com/tessera-dev/tessera/virtual/syncer"
)

// publicPaths are open to everyone, anonymous requests included.
var publicPaths = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// pathAuthorizer is the authorizer of the generic filter chain, which
// sees no logical cluster: the virtual workspaces authorize their
// requests themselves, the health paths and /version are public (also
// /healthz/<check> and the like, to authenticated users), and the rest
// (metrics, debugging) is for members of system:masters.
func pathAuthorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		p := a.GetPath()
		switch {
		case strings.HasPrefix(p, apiexportvw.PathPrefix), strings.HasPrefix(p, initializingworkspaces.PathPrefix), syncervw.Handles(p):
			return authorizer.DecisionAllow, "virtual workspaces authorize their requests themselves", nil
		case !a.IsResourceRequest() && (a.GetVerb() == "get" || a.GetVerb() == "head") && isPublic(p):
			return authorizer.DecisionAllow, "public path", nil
		case a.GetUser() != nil && shardadmin.Is(a.GetUser()):
			return authorizer.DecisionAllow, "member of system:masters", nil
		}
		return authorizer.DecisionDeny, "only the virtual workspaces under /services/ are served", nil
	})
}

func isPublic(p string) bool {
	if publicPaths[p] {
		return true
	}
	for _, prefix := range []string{"/healthz/", "/livez/", "/readyz/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}
