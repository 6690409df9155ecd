package discovery

import (
	"bytes"
	"context"
	"net/http"

	"k8s.io/klog/v2"
)

// recorder is an in-memory http.ResponseWriter for calling the wrapped
// handler in-process.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// code is the response status, 200 when the handler wrote nothing.
func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// copyTo replays the recorded response.
func (r *recorder) copyTo(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.code())
	_, _ = w.Write(r.body.Bytes())
}

// forwardJSON calls next with a copy of req that asks for plain JSON, so the
// answer is what this client would get, in a form this package can decode.
func forwardJSON(next http.Handler, req *http.Request) *recorder {
	r := req.Clone(req.Context())
	r.Header.Set("Accept", "application/json")
	r.Header.Del("Accept-Encoding")
	r.Header.Del("If-None-Match")
	r.Header.Del("If-Modified-Since")
	rec := newRecorder()
	next.ServeHTTP(rec, r)
	return rec
}

// getInProcess calls next in-process with a GET for path, as no particular client
// and outside any logical cluster. It is cancelled with parent but carries
// none of its values except the logger.
func getInProcess(parent context.Context, next http.Handler, path, accept, ifNoneMatch string) (*recorder, error) {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.FromContext(parent)))
	defer cancel()
	stop := context.AfterFunc(parent, cancel)
	defer stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	req.RequestURI = path
	req.Header.Set("Accept", accept)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	rec := newRecorder()
	next.ServeHTTP(rec, req)
	return rec, nil
}
