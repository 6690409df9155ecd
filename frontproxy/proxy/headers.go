package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
)

// IdentityHeaders are the request headers that carry the authenticated user
// to a backend, which believes them over the proxy's mTLS connection.
type IdentityHeaders struct {
	User        string
	Group       string
	ExtraPrefix string
}

// DefaultIdentityHeaders are the headers shards accept by default
// (--requestheader-username-headers and friends).
var DefaultIdentityHeaders = IdentityHeaders{User: "X-Remote-User", Group: "X-Remote-Group", ExtraPrefix: "X-Remote-Extra-"}

// withDefaults fills in unset header names.
func (h IdentityHeaders) withDefaults() IdentityHeaders {
	if h.User == "" {
		h.User = DefaultIdentityHeaders.User
	}
	if h.Group == "" {
		h.Group = DefaultIdentityHeaders.Group
	}
	if h.ExtraPrefix == "" {
		h.ExtraPrefix = DefaultIdentityHeaders.ExtraPrefix
	}
	return h
}

// clear deletes every identity header a client sent: the names the backend
// is told about and, whatever they are, the standard X-Remote-* ones.
func (h IdentityHeaders) clear(header http.Header) {
	for _, names := range []IdentityHeaders{h, DefaultIdentityHeaders} {
		header.Del(names.User)
		header.Del(names.Group)
		prefix := strings.ToLower(names.ExtraPrefix)
		for key := range header {
			if strings.HasPrefix(strings.ToLower(key), prefix) {
				header.Del(key)
			}
		}
	}
}

// set replaces the identity headers with u. Extra keys are path-escaped, as
// the request-header authenticator unescapes them.
func (h IdentityHeaders) set(header http.Header, u user.Info) {
	h.clear(header)
	header.Set(h.User, u.GetName())
	for _, g := range u.GetGroups() {
		header.Add(h.Group, g)
	}
	for k, vs := range u.GetExtra() {
		for _, v := range vs {
			header.Add(h.ExtraPrefix+url.PathEscape(k), v)
		}
	}
}
