package discovery

import (
	"net/http"
	"strings"
)

// relativeLocation turns an absolute path target into a reference relative
// to the request path from, so that a client resolving it keeps whatever
// prefix (/clusters/<name>) it put before the path this handler sees.
func relativeLocation(from, target string) string {
	if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") {
		return target
	}
	depth := strings.Count(from, "/") - 1
	if depth <= 0 {
		return "./" + target[1:]
	}
	return strings.Repeat("../", depth) + target[1:]
}

// relativeRedirects rewrites the absolute Location of redirects written by
// the wrapped handler (handler3 redirects to /openapi/v3/...?hash=...) into
// references relative to the request path.
type relativeRedirects struct {
	http.ResponseWriter
	path string
}

func (w *relativeRedirects) WriteHeader(code int) {
	if code >= 300 && code < 400 {
		if loc := w.Header().Get("Location"); loc != "" {
			w.Header().Set("Location", relativeLocation(w.path, loc))
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *relativeRedirects) Unwrap() http.ResponseWriter { return w.ResponseWriter }
