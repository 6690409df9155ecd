package initializingworkspaces

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// maxResponseBytes bounds the responses the handler reads itself (not the
// ones it streams through).
const maxResponseBytes = 64 * 1024 * 1024

// forward proxies req to the shard at the escaped path and raw query, as
// the shard admin.
func (h *handler) forward(w http.ResponseWriter, req *http.Request, escapedPath, rawQuery string) {
	h.proxy(w, req, h.transport, escapedPath, rawQuery)
}

// proxy sends req to the shard at the escaped path and raw query through
// rt (see forward.Proxy).
func (h *handler) proxy(w http.ResponseWriter, req *http.Request, rt http.RoundTripper, escapedPath, rawQuery string) {
	u, err := url.Parse(h.base + escapedPath)
	if err != nil {
		h.writeError(w, req, apierrors.NewBadRequest(fmt.Sprintf("invalid path: %v", err)))
		return
	}
	u.RawQuery = rawQuery
	forward.Proxy(w, req, rt, u, func(err error) {
		klog.FromContext(req.Context()).Error(err, "Forwarding a request to the shard failed", "path", escapedPath)
		h.writeError(w, req, err)
	})
}

// response is a response of the shard, read in full.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one request to the shard as the shard admin, with the headers
// hdr, and reads the response.
func (h *handler) do(ctx context.Context, method, escapedPath, rawQuery string, hdr http.Header, body []byte) (*response, error) {
	u, err := url.Parse(h.base + escapedPath)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("shard URL: %w", err))
	}
	u.RawQuery = rawQuery
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	out, err := http.NewRequestWithContext(ctx, method, u.String(), r)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("request to the shard: %w", err))
	}
	for k, vs := range hdr {
		for _, v := range vs {
			out.Header.Add(k, v)
		}
	}
	forward.DropCredentials(out.Header)
	resp, err := h.client.Do(out)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("the shard did not answer: %v", err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("reading the answer of the shard: %v", err))
	}
	return &response{code: resp.StatusCode, header: resp.Header, body: b}, nil
}

// write copies a response of the shard to the client.
func (r *response) write(w http.ResponseWriter) {
	for k, vs := range r.header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Connection", "Content-Encoding":
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(r.code)
	_, _ = w.Write(r.body)
}

// err returns the Status of an unsuccessful response as an error.
func (r *response) err() error {
	var st metav1.Status
	if json.Unmarshal(r.body, &st) == nil && st.Kind == "Status" && st.Status == metav1.StatusFailure {
		if st.Code == 0 {
			st.Code = int32(r.code)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	msg := strings.TrimSpace(string(r.body))
	if len(msg) > 512 {
		msg = msg[:512]
	}
	return apierrors.NewGenericServerResponse(r.code, "", logicalClustersGR, "", msg, 0, false)
}

// jsonHeader asks the shard for JSON.
func jsonHeader(req *http.Request) http.Header {
	hdr := http.Header{"Accept": {"application/json"}}
	if ua := req.Header.Get("User-Agent"); ua != "" {
		hdr.Set("User-Agent", ua)
	}
	return hdr
}

// getLogicalCluster reads the LogicalCluster of a logical cluster from the
// shard and returns it decoded and as JSON.
func (h *handler) getLogicalCluster(ctx context.Context, name logicalcluster.Name) (*corev1alpha1.LogicalCluster, []byte, error) {
	resp, err := h.do(ctx, http.MethodGet, "/clusters/"+string(name)+resourcePath+"/"+corev1alpha1.LogicalClusterName, "",
		http.Header{"Accept": {"application/json"}}, nil)
	if err != nil {
		return nil, nil, err
	}
	if resp.code != http.StatusOK {
		return nil, nil, resp.err()
	}
	lc := &corev1alpha1.LogicalCluster{}
	if err := json.Unmarshal(resp.body, lc); err != nil {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("decoding the LogicalCluster of %q: %w", name, err))
	}
	return lc, resp.body, nil
}

// pending tells whether the logical cluster exists on this shard and
// waits for the initializer: from the cache when there is one, else (and
// on a cache miss, since the cache may lag a fresh create) from the shard.
func (h *handler) pending(ctx context.Context, name logicalcluster.Name, in corev1alpha1.LogicalClusterInitializer) (bool, error) {
	if h.lookup != nil {
		lc, err := h.lookup(name)
		switch {
		case err == nil:
			return corev1alpha1.HasInitializer(lc.Status.Initializers, in), nil
		case !apierrors.IsNotFound(err):
			return false, apierrors.NewInternalError(fmt.Errorf("reading the LogicalCluster of %q: %w", name, err))
		}
	}
	lc, _, err := h.getLogicalCluster(ctx, name)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return corev1alpha1.HasInitializer(lc.Status.Initializers, in), nil
}
