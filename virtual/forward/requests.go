package forward

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/klog/v2"
)

// IsLongRunning tells whether a request under prefix is a watch: ?watch=true,
// or the legacy watch path in what follows the first n segments after
// prefix (the virtual workspace's own, up to /clusters/<name>).
func IsLongRunning(req *http.Request, prefix string, n int) bool {
	rest, ok := strings.CutPrefix(req.URL.Path, prefix)
	if !ok {
		return false
	}
	if IsWatch(req) {
		return true
	}
	parts := strings.SplitN(rest, "/", n+1)
	return len(parts) == n+1 && IsLegacyWatch(strings.Split(parts[n], "/"))
}

// IsWatch tells whether a request asks for a watch with ?watch=true.
func IsWatch(req *http.Request) bool {
	w, err := strconv.ParseBool(req.URL.Query().Get("watch"))
	return err == nil && w
}

// Verb is the API verb of a resource request: of a named object or not,
// by the legacy watch path or not.
func Verb(req *http.Request, named, legacyWatch bool) string {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case legacyWatch:
			return "watch"
		case named:
			return "get"
		case IsWatch(req):
			return "watch"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return ""
}

// WatchEvent is a JSON watch event whose object is left encoded.
type WatchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// CopyWatch copies the JSON watch events of body to w as they come,
// passing each through edit, which may change it and drops it by returning
// false. It returns when body ends or the client goes away.
func CopyWatch(w http.ResponseWriter, req *http.Request, body io.Reader, edit func(*WatchEvent) bool) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	dec := json.NewDecoder(body)
	for {
		var ev WatchEvent
		if err := dec.Decode(&ev); err != nil {
			if req.Context().Err() == nil && err != io.EOF {
				klog.FromContext(req.Context()).V(4).Info("A forwarded watch ended", "err", err)
			}
			return
		}
		if !edit(&ev) {
			continue
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return
		}
		if _, err := w.Write(append(b, '\n')); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// WriteJSON writes obj as a JSON answer with code.
func WriteJSON(w http.ResponseWriter, code int, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
