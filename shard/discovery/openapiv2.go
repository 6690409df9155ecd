package discovery

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/NYTimes/gziphandler"
	"github.com/munnerz/goautoneg"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// openAPIV2Path is where the generic server serves OpenAPI v2.
const openAPIV2Path = "/openapi/v2"

// openAPIV2Doc is the merged OpenAPI v2 document of one logical cluster,
// kept serialised: JSON when it is built, protobuf on the first request for
// it. The merged spec itself is dropped once encoded, so the document holds
// only its encodings, which is what the cache accounts for.
type openAPIV2Doc struct {
	fingerprint string
	builtin     *snapshot[*builtinAPIs]
	core        *snapshot[*builtinAPIs]
	static      *snapshot[*spec.Swagger]
	handler     http.Handler

	json         []byte
	etag         string
	lastModified time.Time

	protoOnce sync.Once
	proto     atomic.Pointer[[]byte]
	protoErr  error
	// grown is called once the protobuf encoding exists.
	grown func(*openAPIV2Doc)
}

// current tells whether the document was built from these inputs.
func (d *openAPIV2Doc) current(docs *clusterDocs, static *snapshot[*spec.Swagger]) bool {
	return d.fingerprint == docs.fingerprint && d.builtin == docs.builtin && d.core == docs.core && d.static == static
}

// size is the number of bytes the document's encodings hold.
func (d *openAPIV2Doc) size() int64 {
	n := int64(len(d.json))
	if p := d.proto.Load(); p != nil {
		n += int64(len(*p))
	}
	return n
}

// protobuf returns the document as protobuf, encoding it on first use.
func (d *openAPIV2Doc) protobuf() ([]byte, error) {
	d.protoOnce.Do(func() {
		data, err := handler.ToProtoBinary(d.json)
		if err != nil {
			d.protoErr = fmt.Errorf("encoding the OpenAPI v2 document as protobuf: %w", err)
			return
		}
		d.proto.Store(&data)
		if d.grown != nil {
			d.grown(d)
		}
	})
	if d.protoErr != nil {
		return nil, d.protoErr
	}
	return *d.proto.Load(), nil
}

// Media types of OpenAPI v2 documents, as k8s.io/kube-openapi/pkg/handler
// negotiates them.
const (
	subTypeV2Protobuf           = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	subTypeV2ProtobufDeprecated = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// serve writes the document with kube-openapi's content negotiation and
// caching headers (the handler gzips it as kube-openapi's does).
func (d *openAPIV2Doc) serve(w http.ResponseWriter, req *http.Request) {
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
		{subTypeV2ProtobufDeprecated, "application/" + subTypeV2Protobuf, true},
		{subTypeV2Protobuf, "application/" + subTypeV2Protobuf, true},
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, a := range accepted {
			if (clause.Type != "application" && clause.Type != "*") || (clause.SubType != a.subType && clause.SubType != "*") {
				continue
			}
			data := d.json
			if a.protobuf {
				var err error
				if data, err = d.protobuf(); err != nil {
					klog.FromContext(req.Context()).Error(err, "Cannot serve OpenAPI v2")
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
			}
			w.Header().Set("Content-Type", a.contentType)
			// One ETag for both encodings, as kube-openapi: Vary: Accept.
			w.Header().Set("Etag", strconv.Quote(d.etag))
			http.ServeContent(w, req, openAPIV2Path, d.lastModified, bytes.NewReader(data))
			return
		}
	}
	w.WriteHeader(http.StatusNotAcceptable)
}

// openAPIV2 returns the cached document of a cluster, building it when the
// CRDs or the built-in document changed.
func (h *Handler) openAPIV2(ctx context.Context, cluster logicalcluster.Name, docs *clusterDocs) (*openAPIV2Doc, error) {
	static, err := h.builtins.openAPIV2.get(ctx)
	if err != nil {
		return nil, err
	}
	if d, ok := h.openAPIV2Docs.get(cluster); ok && d.current(docs, static) {
		return d, nil
	}
	// Building is expensive and v2 is rarely asked for: build one at a time
	// rather than the same one concurrently.
	h.openAPIV2Lock.Lock()
	defer h.openAPIV2Lock.Unlock()
	if d, ok := h.openAPIV2Docs.get(cluster); ok && d.current(docs, static) {
		return d, nil
	}
	merged, err := buildOpenAPIV2(ctx, static.value, docs.apis)
	if err != nil {
		return nil, err
	}
	data, err := merged.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the OpenAPI v2 document: %w", err)
	}
	d := &openAPIV2Doc{
		fingerprint:  docs.fingerprint,
		builtin:      docs.builtin,
		core:         docs.core,
		static:       static,
		json:         data,
		etag:         computeETag(data),
		lastModified: time.Now(),
		grown:        func(d *openAPIV2Doc) { h.openAPIV2Docs.resize(cluster, d) },
	}
	d.handler = gziphandler.GzipHandler(http.HandlerFunc(d.serve))
	h.openAPIV2Docs.add(cluster, d)
	return d, nil
}

// buildOpenAPIV2 merges the CRDs' schemas into the built-in document as
// apiextensions-apiserver's openapi controller does: one spec per CRD over
// its served versions, defaults pruned, the built-in document taking
// precedence. A CRD whose schema cannot be built is left out and logged.
func buildOpenAPIV2(ctx context.Context, static *spec.Swagger, apis crdAPIs) (*spec.Swagger, error) {
	opts := builder.Options{
		V2:                      true,
		IncludeSelectableFields: utilfeature.DefaultFeatureGate.Enabled(apiextensionsfeatures.CustomResourceFieldSelectors),
	}
	// The versions each CRD serves here (those newCRDAPIs kept), in the
	// order the CRDs were first met: core v1 first, then groups; CRDs are
	// sorted.
	type crdVersions struct {
		crd      *apiextensionsv1.CustomResourceDefinition
		versions []string
	}
	var order []*crdVersions
	byName := map[string]*crdVersions{}
	for _, v := range apis.groupVersions() {
		for _, crd := range v.version.crds {
			cv := byName[crd.Name]
			if cv == nil {
				cv = &crdVersions{crd: crd}
				byName[crd.Name] = cv
				order = append(order, cv)
			}
			cv.versions = append(cv.versions, v.gv.Version)
		}
	}

	logger := klog.FromContext(ctx)
	crdSpecs := make([]*spec.Swagger, 0, len(order))
	for _, cv := range order {
		merged := &spec.Swagger{}
		for _, v := range cv.versions {
			s, err := builder.BuildOpenAPIV2(cv.crd, v, opts)
			if err != nil {
				logger.Error(err, "Leaving a CRD version out of OpenAPI v2", "crd", cv.crd.Name, "version", v)
				continue
			}
			s.Definitions = handler.PruneDefaults(s.Definitions)
			if s.Paths != nil {
				s.Paths.Paths = corePaths(s.Paths.Paths)
			}
			if merged, err = builder.MergeSpecs(merged, s); err != nil {
				return nil, fmt.Errorf("merging the OpenAPI v2 schemas of CRD %s: %w", cv.crd.Name, err)
			}
		}
		crdSpecs = append(crdSpecs, merged)
	}
	merged, err := builder.MergeSpecs(static, crdSpecs...)
	if err != nil {
		return nil, fmt.Errorf("merging CRD schemas into the built-in OpenAPI v2 document: %w", err)
	}
	return merged, nil
}
