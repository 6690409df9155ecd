package discovery

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericdiscovery "k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// wantsAggregated tells whether a request to /apis asks for aggregated
// discovery, decided as k8s.io/apiserver's discovery wrapper decides it.
func (h *Handler) wantsAggregated(req *http.Request) bool {
	mediaType, _ := negotiation.NegotiateMediaTypeOptions(req.Header.Get("Accept"), h.aggregated.SupportedMediaTypes(), aggregated.DiscoveryEndpointRestrictions)
	return aggregated.IsAggregatedDiscoveryGVK(mediaType.Convert)
}

// serveAPIs serves /apis.
func (h *Handler) serveAPIs(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name) {
	docs, err := h.clusterDocs(req.Context(), cluster)
	switch {
	case err != nil:
		h.writeError(w, req, internalError(err))
	case docs == nil || len(docs.apis.groups) == 0:
		// Without CRDs, or with CRDs of the core group only, which /apis
		// does not list.
		h.next.ServeHTTP(w, req)
	case h.wantsAggregated(req):
		h.serveAggregated(w, req, &docs.aggregated, docs.aggregatedETag)
	default:
		h.serveGroupList(w, req, docs)
	}
}

// serveCoreAPIs serves /api: its aggregated discovery with the cluster's CRD
// resources of core v1. The legacy document (APIVersions) is the same in
// every cluster.
func (h *Handler) serveCoreAPIs(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name) {
	if !h.wantsAggregated(req) {
		h.next.ServeHTTP(w, req)
		return
	}
	if docs := h.coreDocs(w, req, cluster); docs != nil {
		h.serveAggregated(w, req, &docs.coreAggregated, docs.coreAggregatedETag)
	}
}

// serveCoreVersion serves /api/v1: the built-in resources as the wrapped
// handler lists them, with the cluster's CRD resources of core v1.
func (h *Handler) serveCoreVersion(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name) {
	if docs := h.coreDocs(w, req, cluster); docs != nil {
		h.serveMergedResourceList(w, req, coreV1, docs.apis.core)
	}
}

// coreDocs returns the documents of a cluster with CRD resources of core
// v1; otherwise it passes the request to the wrapped handler (or writes
// the error) and returns nil.
func (h *Handler) coreDocs(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name) *clusterDocs {
	docs, err := h.clusterDocs(req.Context(), cluster)
	switch {
	case err != nil:
		h.writeError(w, req, internalError(err))
	case docs == nil || docs.apis.core == nil:
		h.next.ServeHTTP(w, req)
	default:
		return docs
	}
	return nil
}

// serveAggregated writes the cluster's aggregated discovery document with
// its ETag, in the version and encoding the client negotiated, as
// k8s.io/apiserver's discovery manager does.
func (h *Handler) serveAggregated(w http.ResponseWriter, req *http.Request, list *apidiscoveryv2.APIGroupDiscoveryList, etag string) {
	mediaType, _, err := negotiation.NegotiateOutputMediaType(req, h.aggregated, aggregated.DiscoveryEndpointRestrictions)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	target := mediaType.Convert.GroupVersion()
	if target == apidiscoveryv2beta1.SchemeGroupVersion && utilfeature.DefaultFeatureGate.Enabled(genericfeatures.AggregatedDiscoveryRemoveBetaType) {
		h.writeError(w, req, notFound())
		return
	}
	aggregated.ServeHTTPWithETag(list, etag, target, h.aggregated, w, req)
}

// serveGroupList writes the legacy /apis document: the built-in groups as
// the wrapped handler lists them for this client (the server addresses
// depend on the client's address), followed by the cluster's CRD groups.
func (h *Handler) serveGroupList(w http.ResponseWriter, req *http.Request, docs *clusterDocs) {
	var builtin metav1.APIGroupList
	if !h.forwardDecoded(w, req, &builtin, "API group list") {
		return
	}
	var addresses fixedAddresses
	if len(builtin.Groups) > 0 {
		addresses = builtin.Groups[0].ServerAddressByClientCIDRs
	}
	groups := genericdiscovery.NewRootAPIsHandler(addresses, h.serializer)
	for _, g := range mergeLegacyGroups(builtin.Groups, docs.apis) {
		groups.AddGroup(g)
	}
	groups.ServeHTTP(w, req)
}

// serveGroup serves /apis/<group>.
func (h *Handler) serveGroup(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name, group string) {
	builtin, docs, err := h.discoveryDocs(req, cluster)
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	var crdGroup *crdGroup
	if docs != nil {
		crdGroup = docs.apis.group(group)
	}
	isBuiltin := builtin.hasGroup(group)
	switch {
	case crdGroup == nil && isBuiltin:
		h.next.ServeHTTP(w, req)
	case crdGroup == nil:
		h.writeError(w, req, notFound())
	case !isBuiltin:
		genericdiscovery.NewAPIGroupHandler(h.serializer, crdGroup.apiGroup()).ServeHTTP(w, req)
	default:
		// CRDs add versions to a built-in group.
		var g metav1.APIGroup
		if !h.forwardDecoded(w, req, &g, fmt.Sprintf("API group %q", group)) {
			return
		}
		genericdiscovery.NewAPIGroupHandler(h.serializer, mergeLegacyGroup(g, crdGroup)).ServeHTTP(w, req)
	}
}

// serveGroupVersion serves /apis/<group>/<version>.
func (h *Handler) serveGroupVersion(w http.ResponseWriter, req *http.Request, cluster logicalcluster.Name, gv schema.GroupVersion) {
	builtin, docs, err := h.discoveryDocs(req, cluster)
	if err != nil {
		h.writeError(w, req, internalError(err))
		return
	}
	var v *crdVersion
	if docs != nil {
		v = docs.apis.groupVersion(gv)
	}
	isBuiltin := builtin.hasGroupVersion(gv)
	switch {
	case v == nil && isBuiltin:
		h.next.ServeHTTP(w, req)
		return
	case v == nil:
		h.writeError(w, req, notFound())
		return
	}
	if isBuiltin {
		// CRDs add resources to a built-in group version.
		h.serveMergedResourceList(w, req, gv, v)
		return
	}
	serveResourceList(w, req, h.serializer, gv, v.resources)
}

// serveMergedResourceList writes the resource list of a built-in group
// version, as the wrapped handler lists it, with the CRD resources of v.
func (h *Handler) serveMergedResourceList(w http.ResponseWriter, req *http.Request, gv schema.GroupVersion, v *crdVersion) {
	var list metav1.APIResourceList
	if !h.forwardDecoded(w, req, &list, "API resource list of "+gv.String()) {
		return
	}
	serveResourceList(w, req, h.serializer, gv, mergeResourceList(list.APIResources, v))
}

// serveResourceList writes a group version's APIResourceList.
func serveResourceList(w http.ResponseWriter, req *http.Request, serializer runtime.NegotiatedSerializer, gv schema.GroupVersion, resources []metav1.APIResource) {
	genericdiscovery.NewAPIVersionHandler(serializer, gv, genericdiscovery.APIResourceListerFunc(func() []metav1.APIResource {
		return resources
	})).ServeHTTP(w, req)
}

// discoveryDocs returns the built-in discovery and the cluster's documents
// (nil without CRDs).
func (h *Handler) discoveryDocs(req *http.Request, cluster logicalcluster.Name) (*builtinAPIs, *clusterDocs, error) {
	docs, err := h.clusterDocs(req.Context(), cluster)
	if err != nil {
		return nil, nil, err
	}
	if docs != nil {
		return docs.builtin.value, docs, nil
	}
	builtin, err := h.builtins.apis.get(req.Context())
	if err != nil {
		return nil, nil, err
	}
	return builtin.value, nil, nil
}

// fixedAddresses are the server addresses the wrapped handler gave a client.
type fixedAddresses []metav1.ServerAddressByClientCIDR

func (a fixedAddresses) ServerAddressByClientCIDRs(net.IP) []metav1.ServerAddressByClientCIDR {
	return a
}

// forwardDecoded asks the wrapped handler for the request's document in
// JSON and decodes it into v, the built-in what. When it cannot, it writes
// the response (the wrapped handler's, or an error) and returns false.
func (h *Handler) forwardDecoded(w http.ResponseWriter, req *http.Request, v any, what string) bool {
	rec := forwardJSON(h.next, req)
	if rec.code() != http.StatusOK {
		rec.copyTo(w)
		return false
	}
	if err := json.Unmarshal(rec.body.Bytes(), v); err != nil {
		h.writeError(w, req, internalError(fmt.Errorf("decoding the built-in %s: %w", what, err)))
		return false
	}
	return true
}
