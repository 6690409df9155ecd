package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// serveOpenAPIV2 serves /openapi/v2.
func (h *Handler) serveOpenAPIV2(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name) {
	docs, err := h.clusterDocs(req.Context(), cluster)
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	if docs == nil {
		h.next.ServeHTTP(w, req)
		return
	}
	d, err := h.openAPIV2(req.Context(), cluster, docs)
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	d.handler.ServeHTTP(w, req)
}

// serveOpenAPIV3Root serves /openapi/v3.
func (h *Handler) serveOpenAPIV3Root(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name) {
	docs, err := h.clusterDocs(req.Context(), cluster)
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	if docs == nil {
		h.next.ServeHTTP(w, req)
		return
	}
	builtin, err := h.builtins.openAPIV3.get(req.Context())
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	root, err := docs.openAPIV3RootDoc(req.Context(), builtin)
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	serveOpenAPIV3Root(w, req, root)
}

// serveOpenAPIV3 serves /openapi/v3/<path>: CRD group versions of the
// cluster, and built-in ones its CRDs add resources to, from its documents,
// other built-in documents through the wrapped handler, and a 404 for
// anything else (such as a CRD group version of another cluster).
func (h *Handler) serveOpenAPIV3(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name, p string) {
	docs, err := h.clusterDocs(req.Context(), cluster)
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	if docs != nil {
		if doc, ok := docs.openAPIV3[p]; ok {
			h.serveOpenAPIV3Doc(w, req, p, doc)
			return
		}
	}
	builtin, err := h.builtins.openAPIV3.get(req.Context())
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	if _, ok := builtin.value.Paths[p]; ok {
		// The wrapped handler redirects outdated hashes to an absolute path,
		// which would leave the logical cluster.
		h.next.ServeHTTP(&relativeRedirects{ResponseWriter: w, path: req.URL.Path}, req)
		return
	}
	h.writeError(w, req, notFound())
}

// builtinOpenAPIV3 returns the wrapped handler's OpenAPI v3 document of a
// built-in group version.
func (h *Handler) builtinOpenAPIV3(ctx context.Context, gv schema.GroupVersion) (*spec3.OpenAPI, error) {
	p := openAPIV3Prefix + "/" + openAPIV3Path(gv)
	rec, err := getInProcess(ctx, h.next, p, acceptJSON, "")
	if err != nil {
		return nil, err
	}
	if rec.code() != http.StatusOK {
		return nil, fmt.Errorf("getting the built-in %s: status %d: %s", p, rec.code(), truncate(rec.body.Bytes(), 200))
	}
	doc := &spec3.OpenAPI{}
	if err := json.Unmarshal(rec.body.Bytes(), doc); err != nil {
		return nil, fmt.Errorf("decoding the built-in %s: %w", p, err)
	}
	return doc, nil
}
