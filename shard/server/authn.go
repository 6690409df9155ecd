package server

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// publicPaths may be read without credentials: health checks of load
// balancers and process supervisors, and the version.
var publicPaths = []string{"/livez", "/readyz", "/healthz", "/version"}

// healthAnonymous authenticates requests for the public paths as
// system:anonymous; anonymous requests for anything else stay
// unauthenticated (401).
type healthAnonymous struct{}

func (healthAnonymous) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, false, nil
	}
	for _, p := range publicPaths {
		if req.URL.Path == p || strings.HasPrefix(req.URL.Path, p+"/") {
			return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
		}
	}
	return nil, false, nil
}
