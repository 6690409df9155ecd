package proxy

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Authentication decides who a client is.
//
// A client certificate is verified here (Certificates), and the user, less
// the groups the filter drops, is asserted to the backend in identity
// headers. A request without a client certificate but with a bearer token is
// passed on with the token and without identity headers, over a connection
// without the proxy's client certificate, so that the shard checks the
// token itself (service account tokens are valid only in the logical
// cluster that issued them, which only its shard can tell) and answers 401
// for a token it does not accept; this is what kcp's front-proxy does when
// it is given no token authenticator of its own. Anything else is refused
// here with 401.
type Authentication struct {
	// Certificates authenticates client certificates; nil refuses them.
	Certificates authenticator.Request
	// DropGroups are never passed on; "prefix*" matches a prefix.
	DropGroups []string
	// PassOnGroups, when not empty, are the only groups passed on;
	// "prefix*" matches a prefix. Dropping wins.
	PassOnGroups []string
}

// DefaultDropGroups are groups only shard-internal traffic may carry: as in
// kcp, a client certificate in system:masters is no shard admin through the
// front-proxy.
var DefaultDropGroups = []string{user.SystemPrivilegedGroup, "system:kcp:logical-cluster-admin", "system:kcp:initializer:*", "system:kcp:terminator:*"}

// websocketTokenPrefix starts the WebSocket subprotocol carrying a bearer
// token (k8s.io/apiserver's websocket protocol authenticator).
const websocketTokenPrefix = "base64url.bearer.authorization.k8s.io."

// authenticate returns the user to assert, or nil to pass the request's
// bearer token on.
func (a *Authentication) authenticate(req *http.Request) (user.Info, error) {
	if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
		if a.Certificates == nil {
			return nil, apierrors.NewUnauthorized("client certificates are not accepted by this front-proxy (it has no --client-ca-file)")
		}
		resp, ok, err := a.Certificates.AuthenticateRequest(req)
		if err != nil || !ok || resp == nil || resp.User == nil {
			return nil, apierrors.NewUnauthorized("the client certificate is not signed by a CA this front-proxy trusts, or has expired")
		}
		return a.filter(resp.User), nil
	}
	switch auth := strings.TrimSpace(req.Header.Get("Authorization")); {
	case hasBearerToken(auth):
		return nil, nil
	case auth != "":
		return nil, apierrors.NewUnauthorized("only client certificates and bearer tokens are accepted")
	case hasWebSocketToken(req):
		return nil, nil
	}
	return nil, apierrors.NewUnauthorized("authentication required: present a client certificate signed by the front-proxy's client CA, or a bearer token")
}

func hasBearerToken(auth string) bool {
	scheme, token, ok := strings.Cut(auth, " ")
	return ok && strings.EqualFold(scheme, "bearer") && strings.TrimSpace(token) != ""
}

func hasWebSocketToken(req *http.Request) bool {
	if !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		return false
	}
	for _, v := range req.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if strings.HasPrefix(strings.TrimSpace(p), websocketTokenPrefix) {
				return true
			}
		}
	}
	return false
}

// filter drops the groups that are not passed on.
func (a *Authentication) filter(u user.Info) user.Info {
	var groups []string
	for _, g := range u.GetGroups() {
		if matches(a.DropGroups, g) || (len(a.PassOnGroups) > 0 && !matches(a.PassOnGroups, g)) {
			continue
		}
		groups = append(groups, g)
	}
	return &user.DefaultInfo{Name: u.GetName(), UID: u.GetUID(), Groups: groups, Extra: u.GetExtra()}
}

func matches(patterns []string, g string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(g, prefix) {
				return true
			}
		} else if p == g {
			return true
		}
	}
	return false
}
