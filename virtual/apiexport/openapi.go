package apiexport

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// OpenAPI v3 of the virtual workspace, so that kubectl can validate what
// it creates and explain the exported resources: the root document lists
// the group versions of the export's schemas, whose documents are built
// from the schemas as apiextensions-apiserver builds them for CRDs, and
// those of claimed built-in resources, whose documents are the shard's.
// Server-relative URLs are rooted at /openapi/v3: client-go keeps the
// virtual workspace's base path in front of them.

// openAPIV3 serves /openapi/v3[/<path>]: rest are the segments after
// "openapi", "v3".
func (h *handler) openAPIV3(w http.ResponseWriter, req *http.Request, t target, rest []string) {
	if len(rest) == 0 {
		h.openAPIV3Root(w, req, t)
		return
	}
	var gv schema.GroupVersion
	switch {
	case len(rest) == 3 && rest[0] == "apis":
		gv = schema.GroupVersion{Group: rest[1], Version: rest[2]}
	case len(rest) == 2 && rest[0] == "api":
		gv = schema.GroupVersion{Version: rest[1]}
	default:
		h.writeError(w, req, forward.ErrPathNotFound())
		return
	}
	doc, err := h.openAPIV3Doc(req, t.export, gv)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", `"`+etag(doc)+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
}

func (h *handler) openAPIV3Root(w http.ResponseWriter, req *http.Request, t target) {
	paths := map[string]handler3.OpenAPIV3DiscoveryGroupVersion{}
	gvs := map[schema.GroupVersion]bool{}
	for g, versions := range h.versionsOf(req, t.export) {
		for _, v := range versions {
			gvs[schema.GroupVersion{Group: g, Version: v}] = true
		}
	}
	for _, c := range h.claimedResources(req, t.export) {
		gvs[c.gv] = true
	}
	for gv := range gvs {
		doc, err := h.openAPIV3Doc(req, t.export, gv)
		if err != nil {
			continue
		}
		p := "apis/" + gv.Group + "/" + gv.Version
		if gv.Group == "" {
			p = "api/" + gv.Version
		}
		u := url.URL{Path: path.Join("/openapi/v3", p), RawQuery: url.Values{"hash": []string{etag(doc)}}.Encode()}
		paths[p] = handler3.OpenAPIV3DiscoveryGroupVersion{ServerRelativeURL: u.String()}
	}
	h.writeJSON(w, &handler3.OpenAPIV3Discovery{Paths: paths})
}

// openAPIV3Doc returns the JSON document of a group version: built from
// the export's schemas, or the shard's for claimed built-in resources.
func (h *handler) openAPIV3Doc(req *http.Request, export *apisv1alpha1.APIExport, gv schema.GroupVersion) ([]byte, error) {
	var specs []*spec3.OpenAPI
	schemas := h.schemas(export)
	for _, c := range h.claimedResources(req, export) {
		if c.schema != nil && c.gv == gv {
			schemas = append(schemas, c.schema)
		}
	}
	for _, s := range schemas {
		if s.Spec.Group != gv.Group {
			continue
		}
		served := false
		for _, v := range s.Spec.Versions {
			served = served || (v.Name == gv.Version && v.Served)
		}
		if !served {
			continue
		}
		crd, err := apisv1alpha1.CRDFromSchema(s, s.Spec.Group)
		if err != nil {
			continue
		}
		spec, err := builder.BuildOpenAPIV3(crd, gv.Version, builder.Options{})
		if err != nil {
			continue
		}
		specs = append(specs, spec)
	}
	if len(specs) > 0 {
		merged, err := builder.MergeSpecsV3(specs...)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("merging the OpenAPI v3 schemas of %s: %w", gv, err))
		}
		return json.Marshal(merged)
	}
	for _, c := range h.claimedResources(req, export) {
		if c.gv != gv || c.schema != nil {
			continue
		}
		p := "/clusters/" + string(logicalcluster.SystemAdmin) + "/openapi/v3/apis/" + gv.Group + "/" + gv.Version
		if gv.Group == "" {
			p = "/clusters/" + string(logicalcluster.SystemAdmin) + "/openapi/v3/api/" + gv.Version
		}
		var doc json.RawMessage
		if err := h.getJSON(req, p, &doc); err != nil {
			return nil, err
		}
		return doc, nil
	}
	return nil, forward.ErrPathNotFound()
}

func etag(doc []byte) string {
	return strings.ToUpper(fmt.Sprintf("%x", sha512.Sum512(doc)))
}
