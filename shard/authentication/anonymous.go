package authentication

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// IsPublicPath tells whether path may be read without credentials: the
// health checks of load balancers and process supervisors, and the
// version.
func IsPublicPath(path string) bool {
	for _, p := range [...]string{"/livez", "/readyz", "/healthz", "/version"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// healthAnonymous authenticates GET and HEAD requests for the public paths
// as system:anonymous; anonymous requests for anything else stay
// unauthenticated (401).
type healthAnonymous struct{}

// AuthenticateRequest implements authenticator.Request.
func (healthAnonymous) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, false, nil
	}
	if !IsPublicPath(req.URL.Path) {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
}
