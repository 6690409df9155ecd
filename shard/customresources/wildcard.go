package customresources

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/storage"
)

// serveWildcard serves a list or watch across all logical clusters. The
// CRDs of the same name in different clusters may disagree on schemas and
// versions, so the request is served schema-agnostically by the serving
// state of a synthetic CRD (see wildcardCRD).
func (h *Handler) serveWildcard(w http.ResponseWriter, req *http.Request, logger klog.Logger, info *request.RequestInfo) {
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	if h.config.CRDsNamed == nil {
		h.notFound(w, req, info)
		return
	}
	crds, err := h.config.CRDsNamed(info.APIGroup, info.Resource)
	if err != nil && !apierrors.IsNotFound(err) {
		logger.Error(err, "Cannot look up the CustomResourceDefinitions")
		h.fail(w, req, gv, apierrors.NewInternalError(fmt.Errorf("cannot look up the CustomResourceDefinitions of %s: %w",
			schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, err)))
		return
	}
	crd := wildcardCRD(info.Resource+"."+info.APIGroup, crds)
	if crd == nil && h.config.BoundIdentities != nil {
		// No CRD of the name: a resource bound under one identity only is
		// served from it.
		if ids, err := h.config.BoundIdentities(info.APIGroup, info.Resource); err == nil && len(ids) == 1 {
			h.serveIdentityWildcard(w, req, logger, info, ids[0])
			return
		}
	}
	if crd == nil || !servable(crd, info) {
		h.notFound(w, req, info)
		return
	}
	h.serve(w, req, logger, info, wildcardKey(crd), wildcardVersion(crd), crd, false)
}

// serveIdentityWildcard serves a list or watch of <resource>:<identity>
// across all logical clusters: the objects of every binding of the
// APIExport with that identity, schema-agnostically like serveWildcard,
// from the key prefix of the identity. With no binding yet the list is
// empty (the export's own schema defines the resource).
func (h *Handler) serveIdentityWildcard(w http.ResponseWriter, req *http.Request, logger klog.Logger, info *request.RequestInfo, identity string) {
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	if h.config.BoundCRDs == nil {
		h.notFound(w, req, info)
		return
	}
	crds, err := h.config.BoundCRDs(info.APIGroup, info.Resource, identity)
	if err != nil && !apierrors.IsNotFound(err) {
		logger.Error(err, "Cannot look up the bound CustomResourceDefinitions")
		h.fail(w, req, gv, apierrors.NewInternalError(fmt.Errorf("cannot look up the APIExport schemas of %s: %w",
			schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, err)))
		return
	}
	crd := wildcardCRD(info.Resource+"."+info.APIGroup, crds)
	if crd == nil || !servable(crd, info) {
		h.notFound(w, req, info)
		return
	}
	crd.Annotations = map[string]string{apisv1alpha1.AnnotationAPIIdentityKey: identity}
	// The provider's view of its consumers is what the watch cache of the
	// identity serves: it starts and holds the cache.
	req = req.WithContext(storage.WithCacheUser(req.Context()))
	key := stateKey{cluster: logicalcluster.Wildcard, crd: crd.Name + ":" + identity}
	version := wildcardVersion(crd)
	version.digest += "|" + identity
	h.serve(w, req, logger, info, key, version, crd, false)
}

// wildcardSchema is the schema of every version of a wildcard serving
// state: anything goes, nothing is pruned or defaulted.
func wildcardSchema() *apiextensionsv1.CustomResourceValidation {
	return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type:                   "object",
		XPreserveUnknownFields: ptr.To(true),
	}}
}

// wildcardCRD returns the synthetic CRD that serves wildcard list and watch
// requests for the CRDs named name (of any logical cluster), or nil when
// none of them is Established:
//
//   - only Established CRDs count;
//   - served versions: the union of their served versions; the other
//     versions they list in spec.versions or status.storedVersions are
//     known for conversion but not served, so objects stored in them can
//     still be read;
//   - every version's schema is {type: object,
//     x-kubernetes-preserve-unknown-fields: true}: objects of every cluster
//     come back as stored, not pruned or defaulted by a foreign schema;
//   - None conversion: only apiVersion changes;
//   - scope: the scope of most Established CRDs, Namespaced on a tie (a list
//     across all clusters reads the whole key prefix either way, so scope
//     only decides whether /namespaces/<ns>/ requests are served);
//   - names: the accepted names of the oldest Established CRD (by creation,
//     then cluster), a stable choice; no printer columns, no subresources.
//
// It has no UID or resourceVersion; wildcardVersion identifies it.
func wildcardCRD(name string, crds []*apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	var (
		oldest                   *apiextensionsv1.CustomResourceDefinition
		served, known            = sets.New[string](), sets.New[string]()
		namespaced, clusterScope int
	)
	for _, crd := range crds {
		// A CRD that is not Established (yet: it never goes back) has no
		// objects and changes nothing, so its creation does not end
		// wildcard watches until it is served.
		if crd == nil || crd.Name != name || !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			known.Insert(v.Name)
			if v.Served {
				served.Insert(v.Name)
			}
		}
		known.Insert(crd.Status.StoredVersions...)
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			clusterScope++
		} else {
			namespaced++
		}
		if oldest == nil || crd.CreationTimestamp.Before(&oldest.CreationTimestamp) ||
			(crd.CreationTimestamp.Equal(&oldest.CreationTimestamp) && logicalcluster.From(crd) < logicalcluster.From(oldest)) {
			oldest = crd
		}
	}
	if oldest == nil || served.Len() == 0 {
		return nil
	}
	scope := apiextensionsv1.NamespaceScoped
	if clusterScope > namespaced {
		scope = apiextensionsv1.ClusterScoped
	}
	names := oldest.Status.AcceptedNames
	names.ShortNames, names.Categories = nil, nil

	// Kube-aware order, newest first; the first served version is the
	// nominal storage version (nothing is ever written through this state).
	versions := sets.List(known)
	slices.SortStableFunc(versions, func(a, b string) int { return -version.CompareKubeAwareVersionStrings(a, b) })
	out := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:      oldest.Spec.Group,
			Names:      names,
			Scope:      scope,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			AcceptedNames: names,
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
				{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
			},
		},
	}
	storage := ""
	for _, v := range versions {
		if storage == "" && served.Has(v) {
			storage = v
		}
		out.Spec.Versions = append(out.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name:    v,
			Served:  served.Has(v),
			Storage: v == storage,
			Schema:  wildcardSchema(),
		})
	}
	out.Status.StoredVersions = []string{storage}
	return out
}

// WildcardCRD returns the synthetic CRD that serves the CRDs named name
// across all logical clusters (see wildcardCRD), for discovery and OpenAPI
// at /clusters/*, or nil when none of them is Established. Its
// resourceVersion is a digest of what it is made of, so documents built
// from it change when it does.
func WildcardCRD(name string, crds []*apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	crd := wildcardCRD(name, crds)
	if crd == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(wildcardVersion(crd).digest))
	crd.ResourceVersion = hex.EncodeToString(sum[:8])
	return crd
}

// wildcardKey is the cache key of the wildcard serving state of a CRD name.
func wildcardKey(crd *apiextensionsv1.CustomResourceDefinition) stateKey {
	return stateKey{cluster: logicalcluster.Wildcard, crd: crd.Name}
}

// wildcardVersion identifies a synthetic CRD by what it is made of, so the
// wildcard serving state is rebuilt (and its watches end) only when the set
// of CRDs of its name changes what it serves, not on every change of one of
// them.
func wildcardVersion(crd *apiextensionsv1.CustomResourceDefinition) stateVersion {
	var b strings.Builder
	n := crd.Spec.Names
	fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%s|%s", crd.Spec.Group, n.Plural, n.Singular, n.Kind, n.ListKind, crd.Spec.Scope, crd.Status.StoredVersions)
	for _, v := range crd.Spec.Versions {
		fmt.Fprintf(&b, "|%s:%t", v.Name, v.Served)
	}
	return stateVersion{cluster: logicalcluster.Wildcard, digest: b.String()}
}

// refreshWildcard drops the wildcard serving state of a CRD name when the
// CRDs of that name no longer make the state it was built from, so its
// watches end promptly rather than at the next wildcard request.
func (h *Handler) refreshWildcard(crdName string) {
	key := stateKey{cluster: logicalcluster.Wildcard, crd: crdName}
	if !h.states.has(key) {
		// Nothing to refresh; this also keeps a shard's start, when the
		// informer adds every CRD, linear in the number of CRDs.
		return
	}
	resource, group, ok := strings.Cut(crdName, ".")
	if !ok || h.config.CRDsNamed == nil {
		h.states.invalidateKey(key, nil)
		return
	}
	crds, err := h.config.CRDsNamed(group, resource)
	if err != nil {
		h.states.invalidateKey(key, nil)
		return
	}
	crd := wildcardCRD(crdName, crds)
	if crd == nil {
		h.states.invalidateKey(key, nil)
		return
	}
	current := wildcardVersion(crd)
	h.states.invalidateKey(key, func(v stateVersion) bool { return v == current })
}
