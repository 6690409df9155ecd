// Package forward holds what the virtual workspaces of a shard share to
// pass requests on to the shard: a streaming reverse proxy that drops the
// client's credentials and hop-by-hop headers, and the checks that keep a
// rebuilt path from addressing anything but what a virtual workspace
// decided on. A virtual workspace talks to the shard only over HTTP, so
// it can run in-process or in tessera-virtual-workspaces alike.
package forward

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
)

// Shard returns the base URL (scheme and host, no path) and the transport
// of a shard's configuration.
func Shard(cfg *rest.Config) (string, http.RoundTripper, error) {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("shard URL: %w", err)
	}
	u.RawQuery, u.Fragment = "", ""
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("shard transport: %w", err)
	}
	return strings.TrimRight(clusters.ShardHost(u.String()), "/"), transport, nil
}

// Proxy sends req to target through rt, without the client's credentials,
// impersonation and hop-by-hop headers, and copies the response back.
// Responses of unknown length (watches) are flushed as they arrive. When
// the shard cannot be reached, fail gets a ServiceUnavailable error (not
// when the client went away).
func Proxy(w http.ResponseWriter, req *http.Request, rt http.RoundTripper, target *url.URL, fail func(error)) {
	out := req.Clone(req.Context())
	out.URL, out.Host, out.RequestURI = target, "", ""
	if req.ContentLength == 0 {
		out.Body = nil
	}
	RemoveHopHeaders(out.Header)
	DropCredentials(out.Header)
	resp, err := rt.RoundTrip(out)
	if err != nil {
		if req.Context().Err() != nil {
			return // the client went away
		}
		fail(apierrors.NewServiceUnavailable(fmt.Sprintf("the shard did not answer: %v", err)))
		return
	}
	defer resp.Body.Close()
	RemoveHopHeaders(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if resp.ContentLength >= 0 {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	// A stream (a watch) answers at once: clients wait for the headers
	// before they read events, and the first may be long in coming.
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	buf := make([]byte, 32*1024)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
		if err != nil {
			// EOF, or the client or the shard went away: the stream ends.
			return
		}
	}
}

// hopHeaders are the hop-by-hop headers of RFC 9110 section 7.6.1, which a
// proxy does not pass on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// RemoveHopHeaders removes the hop-by-hop headers, and those Connection
// names.
func RemoveHopHeaders(hdr http.Header) {
	for _, f := range hdr.Values("Connection") {
		for _, k := range strings.Split(f, ",") {
			if k = strings.TrimSpace(k); k != "" {
				hdr.Del(k)
			}
		}
	}
	for _, k := range hopHeaders {
		hdr.Del(k)
	}
}

// DropCredentials removes whatever could make the shard take the request
// for another user than the forwarding client's or the one it
// impersonates: the client's own credentials, impersonation and
// front-proxy user headers.
func DropCredentials(hdr http.Header) {
	hdr.Del("Authorization")
	hdr.Del("Cookie")
	for k := range hdr {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "impersonate-") || strings.HasPrefix(lk, "x-remote-") {
			hdr.Del(k)
		}
	}
}

// Segments splits an escaped path into unescaped, checked segments (see
// CheckSegment); a trailing slash is dropped (/apis/ is /apis).
func Segments(escaped string) ([]string, error) {
	if escaped == "" {
		return nil, nil
	}
	raw := strings.Split(escaped, "/")
	if raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1]
	}
	out := make([]string, 0, len(raw))
	for _, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid path segment %q: %v", s, err))
		}
		if err := CheckSegment(u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// Join returns the escaped path of checked segments: empty, or starting
// with "/".
func Join(segments []string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// CheckSegment refuses an unescaped path segment that could address
// something else on the shard than what the handler decided on. The shard
// unescapes the path it is sent once: an escaped '/' would split a segment
// there, and dot and empty segments could lead out of the logical cluster.
// No Kubernetes name holds '/', '%' or a control character, and no client
// sends dot or empty segments.
func CheckSegment(s string) error {
	if s == "" || s == "." || s == ".." {
		return ErrPathNotFound()
	}
	for _, r := range s {
		if r == '/' || r == '\\' || r == '%' || r < 0x20 || r == 0x7f {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid path segment %q: it must not contain '/', '\\', '%%' or control characters, escaped or not", s))
		}
	}
	return nil
}

// IsLegacyWatch tells whether the segments inside a logical cluster use
// the legacy watch prefix: /api/v1/watch/..., /apis/<g>/<v>/watch/...
func IsLegacyWatch(segments []string) bool {
	for i, s := range segments {
		if s == "watch" && (i == 2 || (i == 3 && segments[0] == "apis")) {
			return true
		}
	}
	return false
}

// ErrPathNotFound is the Status of a path a virtual workspace does not
// serve, as an API server answers it.
func ErrPathNotFound() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}
