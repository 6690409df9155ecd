package discovery

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/munnerz/goautoneg"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
)

// openAPIV3Prefix is where the generic server serves OpenAPI v3.
const openAPIV3Prefix = "/openapi/v3"

// Media types of OpenAPI v3 documents, as k8s.io/kube-openapi/pkg/handler3
// negotiates them.
const (
	subTypeJSON                 = "json"
	subTypeV3Protobuf           = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
	subTypeV3ProtobufDeprecated = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// openAPIV3Path is the OpenAPI v3 path of a group version, the key in the
// root document.
func openAPIV3Path(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// serverRelativeURL is what the root document lists for a path, as handler3
// builds it: rooted at /openapi/v3 without the /clusters/<name> prefix, which
// client-go keeps from its own base URL.
func serverRelativeURL(p, etag string) string {
	u := url.URL{Path: path.Join(openAPIV3Prefix, p)}
	u.RawQuery = url.Values{"hash": []string{etag}}.Encode()
	return u.String()
}

// computeETag hashes a document as kube-openapi does.
func computeETag(data []byte) string {
	return fmt.Sprintf("%X", sha512.Sum512(data))
}

// builtinOpenAPIV3Func returns the built-in OpenAPI v3 document of a group
// version.
type builtinOpenAPIV3Func func(ctx context.Context, gv schema.GroupVersion) (*spec3.OpenAPI, error)

// newOpenAPIV3Docs prepares (without building) a document per CRD group
// version. The document of a built-in group version (builtin tells which)
// is the built-in one, as fetch returns it, with the CRDs merged in; core
// v1 is always built in.
func newOpenAPIV3Docs(apis crdAPIs, builtin func(schema.GroupVersion) bool, fetch builtinOpenAPIV3Func) map[string]*openAPIV3Doc {
	docs := map[string]*openAPIV3Doc{}
	for _, v := range apis.groupVersions() {
		doc := &openAPIV3Doc{gv: v.gv, crds: v.version.crds}
		if v.gv == coreV1 || builtin(v.gv) {
			doc.builtin = fetch
		}
		docs[openAPIV3Path(v.gv)] = doc
	}
	return docs
}

// openAPIV3Doc is the OpenAPI v3 document of one CRD group version in one
// logical cluster, built on first use.
type openAPIV3Doc struct {
	gv   schema.GroupVersion
	crds []*apiextensionsv1.CustomResourceDefinition
	// builtin returns the built-in document the CRDs are merged into, for a
	// built-in group version; nil otherwise. It is asked once, when the
	// document is built: the cluster's documents are rebuilt when the
	// built-in discovery changes, which any change of the built-in APIs
	// does.
	builtin builtinOpenAPIV3Func

	jsonOnce     sync.Once
	json         []byte
	etag         string
	lastModified time.Time
	err          error

	protoOnce sync.Once
	proto     []byte
	protoErr  error
}

// load builds the JSON document and its ETag.
func (d *openAPIV3Doc) load(ctx context.Context) error {
	d.jsonOnce.Do(func() {
		var base *spec3.OpenAPI
		if d.builtin != nil {
			// Not cancelled with the request: the outcome is kept.
			var err error
			if base, err = d.builtin(context.WithoutCancel(ctx), d.gv); err != nil {
				d.err = err
				return
			}
		}
		s, err := buildOpenAPIV3(ctx, d.gv, d.crds, base)
		if err != nil {
			d.err = err
			return
		}
		data, err := json.Marshal(s)
		if err != nil {
			d.err = fmt.Errorf("encoding the OpenAPI v3 document of %s: %w", d.gv, err)
			return
		}
		d.json, d.etag, d.lastModified = data, computeETag(data), time.Now()
	})
	return d.err
}

// protobuf returns the document as protobuf.
func (d *openAPIV3Doc) protobuf(ctx context.Context) ([]byte, error) {
	if err := d.load(ctx); err != nil {
		return nil, err
	}
	d.protoOnce.Do(func() {
		d.proto, d.protoErr = handler3.ToV3ProtoBinary(d.json)
		if d.protoErr != nil {
			d.protoErr = fmt.Errorf("encoding the OpenAPI v3 document of %s as protobuf: %w", d.gv, d.protoErr)
		}
	})
	return d.proto, d.protoErr
}

// buildOpenAPIV3 builds the document of a group version from the CRDs that
// serve it, as apiextensions-apiserver's openapiv3 controller does, merged
// into builtin unless it is nil. A CRD whose schema cannot be built is left
// out (and logged) so that it does not hide the others.
func buildOpenAPIV3(ctx context.Context, gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition, builtin *spec3.OpenAPI) (*spec3.OpenAPI, error) {
	opts := builder.Options{
		V2:                      false,
		IncludeSelectableFields: utilfeature.DefaultFeatureGate.Enabled(apiextensionsfeatures.CustomResourceFieldSelectors),
	}
	specs := make([]*spec3.OpenAPI, 0, len(crds)+1)
	if builtin != nil {
		// First, so that the document keeps its info; the CRD resources
		// have paths and schemas of their own (newCRDAPIs leaves out those
		// a built-in resource has).
		specs = append(specs, builtin)
	}
	var errs []error
	for _, crd := range crds {
		s, err := builder.BuildOpenAPIV3(crd, gv.Version, opts)
		if err != nil {
			errs = append(errs, fmt.Errorf("building the OpenAPI v3 schema of CRD %s version %s: %w", crd.Name, gv.Version, err))
			continue
		}
		if s.Paths != nil {
			s.Paths.Paths = corePaths(s.Paths.Paths)
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	for _, err := range errs {
		klog.FromContext(ctx).Error(err, "Leaving a CRD out of OpenAPI v3")
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		return nil, fmt.Errorf("merging the OpenAPI v3 schemas of %s: %w", gv, err)
	}
	return merged, nil
}

// openAPIV3Root is the root document of a logical cluster.
type openAPIV3Root struct {
	// builtin is the built-in root it was merged with.
	builtin      *snapshot[*handler3.OpenAPIV3Discovery]
	json         []byte
	etag         string
	lastModified time.Time
}

// openAPIV3RootDoc returns the built-in root document with the cluster's CRD
// group versions added, and the built-in group versions that CRDs add
// resources to pointing to the merged documents. It builds every CRD
// document, since the root lists their hashes. A group version whose
// document cannot be built is left out (or keeps its built-in document).
func (d *clusterDocs) openAPIV3RootDoc(ctx context.Context, builtin *snapshot[*handler3.OpenAPIV3Discovery]) (*openAPIV3Root, error) {
	d.v3RootLock.Lock()
	defer d.v3RootLock.Unlock()
	if d.v3Root != nil && d.v3Root.builtin == builtin {
		return d.v3Root, nil
	}
	paths := make(map[string]handler3.OpenAPIV3DiscoveryGroupVersion, len(builtin.value.Paths)+len(d.openAPIV3))
	for p, gv := range builtin.value.Paths {
		paths[p] = gv
	}
	keys := make([]string, 0, len(d.openAPIV3))
	for p := range d.openAPIV3 {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		doc := d.openAPIV3[p]
		if _, ok := paths[p]; ok && doc.builtin == nil {
			continue
		}
		if err := doc.load(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Leaving a group version out of the OpenAPI v3 root", "path", p)
			continue
		}
		paths[p] = handler3.OpenAPIV3DiscoveryGroupVersion{ServerRelativeURL: serverRelativeURL(p, doc.etag)}
	}
	data, err := json.Marshal(&handler3.OpenAPIV3Discovery{Paths: paths})
	if err != nil {
		return nil, fmt.Errorf("encoding the OpenAPI v3 root: %w", err)
	}
	d.v3Root = &openAPIV3Root{builtin: builtin, json: data, etag: computeETag(data), lastModified: time.Now()}
	return d.v3Root, nil
}

// serveOpenAPIV3Root writes a root document as handler3 does.
func serveOpenAPIV3Root(w http.ResponseWriter, req *http.Request, root *openAPIV3Root) {
	w.Header().Set("Etag", strconv.Quote(root.etag))
	w.Header().Set("Content-Type", "application/json")
	http.ServeContent(w, req, openAPIV3Prefix, root.lastModified, bytes.NewReader(root.json))
}

// serveOpenAPIV3Doc writes a group version document with handler3's content
// negotiation and caching headers. A request whose hash is not current is
// redirected, relative to the request path, to the current one.
func (h *Handler) serveOpenAPIV3Doc(w http.ResponseWriter, req *http.Request, p string, doc *openAPIV3Doc) {
	accept := req.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	w.Header().Add("Vary", "Accept")
	accepted := []struct {
		subType, contentType string
		protobuf             bool
	}{
		{subTypeJSON, "application/" + subTypeJSON, false},
		{subTypeV3Protobuf, "application/" + subTypeV3Protobuf, true},
		{subTypeV3ProtobufDeprecated, "application/" + subTypeV3Protobuf, true},
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, a := range accepted {
			if (clause.Type != "application" && clause.Type != "*") || (clause.SubType != a.subType && clause.SubType != "*") {
				continue
			}
			if err := doc.load(req.Context()); err != nil {
				h.writeError(w, req, internalError(err))
				return
			}
			data := doc.json
			if a.protobuf {
				var err error
				if data, err = doc.protobuf(req.Context()); err != nil {
					h.writeError(w, req, internalError(err))
					return
				}
			}
			w.Header().Set("Content-Type", a.contentType)
			w.Header().Set("Etag", strconv.Quote(doc.etag))
			if hash := req.URL.Query().Get("hash"); hash != "" {
				if hash != doc.etag {
					w.Header().Set("Location", relativeLocation(req.URL.Path, serverRelativeURL(p, doc.etag)))
					w.WriteHeader(http.StatusMovedPermanently)
					return
				}
				w.Header().Set("Cache-Control", "public, immutable")
				w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
			}
			http.ServeContent(w, req, "", doc.lastModified, bytes.NewReader(data))
			return
		}
	}
	h.writeError(w, req, notAcceptable(accept))
}

// coreAPIsPrefix is where apiextensions-apiserver's builder puts the paths
// of a CRD of the core group ("/apis/" + "" + "/"); they are served below
// /api/.
const coreAPIsPrefix = "/apis//"

// corePaths moves the paths the builder made for a CRD of the core group
// below /api/, where the shard serves them. Other paths are kept.
func corePaths[T any](paths map[string]T) map[string]T {
	for p, item := range paths {
		if rest, ok := strings.CutPrefix(p, coreAPIsPrefix); ok {
			delete(paths, p)
			paths["/api/"+rest] = item
		}
	}
	return paths
}
