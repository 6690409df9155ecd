package apiexport

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// Permission claims: an export asks for resources of its consumers
// (spec.permissionClaims); a consumer's binding accepts or rejects each
// claim (spec.permissionClaims[].state). Through the virtual workspace the
// provider reaches the claimed resources of exactly the consumers whose
// binding accepts the claim as the export states it (same resource,
// identity, all and selectors), and within the claim: all objects, or
// those a resourceSelector names by name and/or namespace, and only with
// the verbs both the export claims and the binding accepts (v1alpha2
// claims; a v1alpha1 claim means all verbs): another verb is Forbidden.
// Every request is checked against the bindings as the informer has them
// now, and so is every object of a list and every event of a watch: a
// rejected or revoked claim cuts access at once, also on watches already
// open.

// claimOf returns the export's claim on group/resource, nil if none.
func claimOf(export *apisv1alpha1.APIExport, group, resource string) *apisv1alpha1.PermissionClaim {
	for i := range export.Spec.PermissionClaims {
		c := &export.Spec.PermissionClaims[i]
		if c.Group == group && c.Resource == resource {
			return c
		}
	}
	return nil
}

// grantedVerbs returns the verbs a binding of cluster to export grants on
// claim: those of the answer that accepts the claim as the export states
// it, nil when no binding accepts it. A v1alpha1 answer grants all verbs
// ("*"); a v1alpha2 answer keeps its verbs in an annotation.
func (h *handler) grantedVerbs(cluster logicalcluster.Name, export *apisv1alpha1.APIExport, claim *apisv1alpha1.PermissionClaim) []string {
	if h.cfg.Bindings.Informer() == nil {
		return nil
	}
	bindings, err := h.cfg.Bindings.Lister().Cluster(cluster).List(everything())
	if err != nil {
		return nil
	}
	exportCluster := logicalcluster.From(export).String()
	for _, b := range bindings {
		if b.DeletionTimestamp != nil || b.Spec.Reference.Export == nil || b.Spec.Reference.Export.Name != export.Name ||
			b.Status.APIExportClusterName != exportCluster {
			continue
		}
		for _, a := range b.Spec.PermissionClaims {
			if a.State == apisv1alpha1.ClaimAccepted && a.EqualGRI(*claim) && a.All == claim.All &&
				equality.Semantic.DeepEqual(a.ResourceSelector, claim.ResourceSelector) {
				return answerVerbs(b, a.PermissionClaim)
			}
		}
	}
	return nil
}

// answerVerbs returns the verbs of a binding's answer to claim.
func answerVerbs(b *apisv1alpha1.APIBinding, claim apisv1alpha1.PermissionClaim) []string {
	if _, ok := b.Annotations[apisv1alpha2.AcceptablePermissionClaimsAnnotation]; !ok {
		return []string{apisv1alpha2.VerbAll}
	}
	answers, err := apisv1alpha2.BindingPermissionClaims(b)
	if err != nil {
		// Admission refuses such annotations; grant nothing rather than
		// all.
		return []string{}
	}
	for _, a := range answers {
		if a.Group == claim.Group && a.Resource == claim.Resource && a.IdentityHash == claim.IdentityHash {
			return a.Verbs
		}
	}
	return []string{}
}

// claimVerbs returns the verbs an export claims on claim: "*" for a claim
// of v1alpha1, those of the claim for v1alpha2.
func claimVerbs(export *apisv1alpha1.APIExport, claim *apisv1alpha1.PermissionClaim) []string {
	if _, ok := export.Annotations[apisv1alpha2.PermissionClaimsAnnotation]; !ok {
		return []string{apisv1alpha2.VerbAll}
	}
	claims, err := apisv1alpha2.ExportPermissionClaims(export)
	if err != nil {
		return []string{}
	}
	for _, c := range claims {
		if c.Group == claim.Group && c.Resource == claim.Resource && c.IdentityHash == claim.IdentityHash {
			return c.Verbs
		}
	}
	return []string{}
}

// allows tells whether verbs name verb or "*".
func allows(verbs []string, verb string) bool {
	return slices.Contains(verbs, verb) || slices.Contains(verbs, apisv1alpha2.VerbAll)
}

// verbForbidden is the error of a request whose verb the claim (as the
// export states it, or as the consumer accepted it; granted is nil across
// consumers) does not grant.
func verbForbidden(gr schema.GroupResource, name, verb string, claim *apisv1alpha1.PermissionClaim, exported, granted []string) error {
	if granted == nil {
		return apierrors.NewForbidden(gr, name, fmt.Errorf("the permission claim on %s grants the verbs %v, not %q", claim, exported, verb))
	}
	return apierrors.NewForbidden(gr, name, fmt.Errorf("the permission claim on %s grants the verbs %v (claimed %v, accepted %v), not %q",
		claim, grantedOf(exported, granted), exported, granted, verb))
}

// grantedOf is what exported and granted allow together.
func grantedOf(exported, granted []string) []string {
	switch {
	case slices.Contains(exported, apisv1alpha2.VerbAll):
		return granted
	case slices.Contains(granted, apisv1alpha2.VerbAll):
		return exported
	}
	var out []string
	for _, v := range exported {
		if slices.Contains(granted, v) {
			out = append(out, v)
		}
	}
	return out
}

// selects tells whether claim covers the object namespace/name; an empty
// name stands for any (a list or a create).
func selects(claim *apisv1alpha1.PermissionClaim, namespace, name string) bool {
	if claim.All {
		return true
	}
	for _, s := range claim.ResourceSelector {
		if (s.Namespace == "" || s.Namespace == namespace) && (s.Name == "" || name == "" || s.Name == name) {
			return true
		}
	}
	return false
}

// objectMeta is what filtering reads of an object.
type objectMeta struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// keeps returns the filter of the objects of a claimed resource, for a
// request of verb (list or watch): objects of the consumers whose binding
// accepts the claim and grants the verb.
func (h *handler) keeps(export *apisv1alpha1.APIExport, claim *apisv1alpha1.PermissionClaim, verb string) func(raw json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var m objectMeta
		if json.Unmarshal(raw, &m) != nil {
			return false
		}
		cluster := logicalcluster.Name(m.Metadata.Annotations[logicalcluster.AnnotationKey])
		if cluster.Empty() || !selectsObject(claim, m.Metadata.Namespace, m.Metadata.Name) {
			return false
		}
		return allows(h.grantedVerbs(cluster, export, claim), verb)
	}
}

// selectsObject is selects for a whole object: a selector with a name
// must name it.
func selectsObject(claim *apisv1alpha1.PermissionClaim, namespace, name string) bool {
	if claim.All {
		return true
	}
	for _, s := range claim.ResourceSelector {
		if (s.Namespace == "" || s.Namespace == namespace) && (s.Name == "" || s.Name == name) {
			return true
		}
	}
	return false
}

// forwardFiltered forwards a list or watch and passes on only the objects
// keep accepts: list items, table rows, watch events. The shard is asked
// for JSON.
func (h *handler) forwardFiltered(w http.ResponseWriter, req *http.Request, shardPath string, keep func(json.RawMessage) bool) {
	u, err := url.Parse(h.base + shardPath)
	if err != nil {
		h.writeError(w, req, apierrors.NewBadRequest(fmt.Sprintf("invalid path: %v", err)))
		return
	}
	u.RawQuery = req.URL.RawQuery
	out := req.Clone(req.Context())
	out.URL, out.Host, out.RequestURI, out.Body = u, "", "", nil
	forward.RemoveHopHeaders(out.Header)
	forward.DropCredentials(out.Header)
	accept := "application/json"
	if isTableRequest(req.Header.Get("Accept")) {
		accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	}
	out.Header.Set("Accept", accept)
	resp, err := h.transport.RoundTrip(out)
	if err != nil {
		if req.Context().Err() == nil {
			h.writeError(w, req, apierrors.NewServiceUnavailable(fmt.Sprintf("the shard did not answer: %v", err)))
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		forward.RemoveHopHeaders(resp.Header)
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if isWatch(req) {
		h.filterWatch(w, req, resp.Body, keep)
		return
	}
	var doc map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		h.writeError(w, req, apierrors.NewInternalError(fmt.Errorf("decoding the shard's answer: %w", err)))
		return
	}
	for _, field := range []string{"items", "rows"} {
		raw, ok := doc[field]
		if !ok {
			continue
		}
		var entries []json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			continue
		}
		kept := make([]json.RawMessage, 0, len(entries))
		for _, e := range entries {
			obj := e
			if field == "rows" {
				var row struct {
					Object json.RawMessage `json:"object"`
				}
				if json.Unmarshal(e, &row) != nil {
					continue
				}
				obj = row.Object
			}
			if keep(obj) {
				kept = append(kept, e)
			}
		}
		doc[field], _ = json.Marshal(kept)
	}
	h.writeJSON(w, doc)
}

// filterWatch copies the JSON watch events that keep accepts; bookmarks
// and errors pass.
func (h *handler) filterWatch(w http.ResponseWriter, req *http.Request, body io.Reader, keep func(json.RawMessage) bool) {
	forward.CopyWatch(w, req, body, func(ev *forward.WatchEvent) bool {
		switch ev.Type {
		case "ADDED", "MODIFIED", "DELETED":
			return keep(ev.Object)
		}
		return true
	})
}

func isWatch(req *http.Request) bool { return forward.IsWatch(req) }

func isTableRequest(accept string) bool { return strings.Contains(accept, "as=Table") }

func everything() labels.Selector { return labels.Everything() }

// builtinDiscovery caches the shard's discovery of the group versions
// claims name (built-in resources do not change while the shard runs).
type builtinDiscovery struct {
	mu    sync.Mutex
	lists map[string]*metav1.APIResourceList
	// preferred is each group's preferred version.
	groups *metav1.APIGroupList
}

// resourceInfo returns the shard's discovery entry of group/resource in
// its preferred version, from /clusters/system:admin.
func (h *handler) resourceInfo(req *http.Request, group, resource string) (schema.GroupVersion, *metav1.APIResource, error) {
	gv, err := h.preferredVersion(req, group)
	if err != nil {
		return schema.GroupVersion{}, nil, err
	}
	list, err := h.resourceListOf(req, gv)
	if err != nil {
		return schema.GroupVersion{}, nil, err
	}
	for i := range list.APIResources {
		if list.APIResources[i].Name == resource {
			r := list.APIResources[i]
			return gv, &r, nil
		}
	}
	return gv, nil, nil
}

func (h *handler) preferredVersion(req *http.Request, group string) (schema.GroupVersion, error) {
	if group == "" {
		return schema.GroupVersion{Version: "v1"}, nil
	}
	h.discovery.mu.Lock()
	groups := h.discovery.groups
	h.discovery.mu.Unlock()
	if groups == nil {
		groups = &metav1.APIGroupList{}
		if err := h.getJSON(req, "/clusters/"+string(logicalcluster.SystemAdmin)+"/apis", groups); err != nil {
			return schema.GroupVersion{}, err
		}
		h.discovery.mu.Lock()
		h.discovery.groups = groups
		h.discovery.mu.Unlock()
	}
	for _, g := range groups.Groups {
		if g.Name == group {
			return schema.GroupVersion{Group: group, Version: g.PreferredVersion.Version}, nil
		}
	}
	return schema.GroupVersion{}, fmt.Errorf("group %q is not served", group)
}

func (h *handler) resourceListOf(req *http.Request, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	h.discovery.mu.Lock()
	list := h.discovery.lists[gv.String()]
	h.discovery.mu.Unlock()
	if list != nil {
		return list, nil
	}
	path := "/clusters/" + string(logicalcluster.SystemAdmin) + "/apis/" + gv.String()
	if gv.Group == "" {
		path = "/clusters/" + string(logicalcluster.SystemAdmin) + "/api/" + gv.Version
	}
	list = &metav1.APIResourceList{}
	if err := h.getJSON(req, path, list); err != nil {
		return nil, err
	}
	h.discovery.mu.Lock()
	if h.discovery.lists == nil {
		h.discovery.lists = map[string]*metav1.APIResourceList{}
	}
	h.discovery.lists[gv.String()] = list
	h.discovery.mu.Unlock()
	return list, nil
}

// getJSON reads a document of the shard as its admin.
func (h *handler) getJSON(req *http.Request, path string, into any) error {
	out, err := http.NewRequestWithContext(req.Context(), http.MethodGet, h.base+path, nil)
	if err != nil {
		return err
	}
	out.Header.Set("Accept", "application/json")
	resp, err := h.transport.RoundTrip(out)
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("the shard did not answer: %v", err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading %s from the shard: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// claimed is a claimed resource as discovery shows it.
type claimed struct {
	gv       schema.GroupVersion
	resource metav1.APIResource
	// schema defines a claimed resource of another export; nil for a
	// built-in resource.
	schema *apisv1alpha1.APIResourceSchema
}

// claimedResources returns the export's claims on built-in resources the
// shard serves and on resources of other exports (by their identity),
// with the verbs the claims name.
func (h *handler) claimedResources(req *http.Request, export *apisv1alpha1.APIExport) []claimed {
	var out []claimed
	for _, c := range export.Spec.PermissionClaims {
		verbs := claimVerbs(export, &c)
		if c.IdentityHash != "" {
			if cl, ok := h.claimedOfExport(c); ok {
				cl.resource.Verbs = narrowVerbs(cl.resource.Verbs, verbs)
				out = append(out, cl)
			}
			continue
		}
		gv, r, err := h.resourceInfo(req, c.Group, c.Resource)
		if err != nil || r == nil {
			continue
		}
		r.Group, r.Version = "", ""
		r.Verbs = narrowVerbs(r.Verbs, verbs)
		out = append(out, claimed{gv: gv, resource: *r})
	}
	if bindingsServed(export) {
		out = append(out, bindingResources()...)
	}
	return out
}

// narrowVerbs returns the verbs of served that claimed allows.
func narrowVerbs(served metav1.Verbs, claimed []string) metav1.Verbs {
	out := metav1.Verbs{}
	for _, v := range served {
		if allows(claimed, v) {
			out = append(out, v)
		}
	}
	return out
}

// claimedRequest routes a request for a resource the export does not
// export: a claimed resource of consumers that accept the claim, or 404.
func (h *handler) claimedRequest(req *http.Request, t target, gv schema.GroupVersion, prefix, rest []string, namespace string, legacyWatch bool) (routed, error) {
	resource := rest[0]
	claim := claimOf(t.export, gv.Group, resource)
	if claim == nil && gv.Group == apiBindings.Group && resource == apiBindings.Resource {
		return h.bindingsRequest(req, t, gv, prefix, rest, legacyWatch)
	}
	if claim == nil {
		return routed{}, forward.ErrPathNotFound()
	}
	named := len(rest) >= 2
	verb := verbOf(req, named, legacyWatch)
	if verb == "" {
		return routed{}, apierrors.NewMethodNotSupported(schema.GroupResource{Group: gv.Group, Resource: resource}, req.Method)
	}
	if t.cluster.Wildcard && verb != "list" && verb != "watch" {
		return routed{}, apierrors.NewMethodNotSupported(schema.GroupResource{Group: gv.Group, Resource: resource}, verb)
	}
	if legacyWatch {
		return routed{}, apierrors.NewBadRequest("use ?watch=true for claimed resources")
	}
	qualified := resource
	if claim.IdentityHash != "" {
		qualified += ":" + claim.IdentityHash
	}
	segments := append(append([]string(nil), prefix...), qualified)
	segments = append(segments, rest[1:]...)
	clusterSegment := string(logicalcluster.Wildcard)
	if !t.cluster.Wildcard {
		clusterSegment = string(t.cluster.Name)
	}
	r := routed{verbs: []string{verb}, shardPath: "/clusters/" + clusterSegment + forward.Join(segments)}
	gr := schema.GroupResource{Group: gv.Group, Resource: resource}
	name := ""
	if named {
		name = rest[1]
	}
	// The verbs of a claim are those the export claims and the consumer
	// grants, both "*" for claims of v1alpha1. Across consumers (list and
	// watch only), each consumer's grant filters its objects.
	exported := claimVerbs(t.export, claim)
	var granted []string
	if !t.cluster.Wildcard {
		if granted = h.grantedVerbs(t.cluster.Name, t.export, claim); granted == nil {
			return routed{}, apierrors.NewNotFound(gr, "")
		}
	}
	if !allows(exported, verb) || (granted != nil && !allows(granted, verb)) {
		return routed{}, verbForbidden(gr, name, verb, claim, exported, granted)
	}
	switch {
	case verb == "list" || verb == "watch":
		r.filter = h.keeps(t.export, claim, verb)
	case verb == "deletecollection" && !claim.All:
		return routed{}, apierrors.NewForbidden(schema.GroupResource{Group: gv.Group, Resource: resource}, "",
			fmt.Errorf("the claim on %s selects objects: delete them one by one", claim))
	case !selects(claim, namespace, name):
		return routed{}, apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: resource}, name)
	}
	return r, nil
}

// claimedOfExport finds the schema of a claim on a resource of another
// export, by the export's identity: the resource in its preferred version
// (the storage version when served, else the first served one).
func (h *handler) claimedOfExport(c apisv1alpha1.PermissionClaim) (claimed, bool) {
	exports, err := h.cfg.Exports.Lister().List(everything())
	if err != nil {
		return claimed{}, false
	}
	for _, e := range exports {
		if e.Status.IdentityHash != c.IdentityHash {
			continue
		}
		for _, s := range h.schemas(e) {
			if s.Spec.Group != c.Group || s.Spec.Names.Plural != c.Resource {
				continue
			}
			version := ""
			for _, v := range s.Spec.Versions {
				if v.Served && (version == "" || v.Storage) {
					version = v.Name
				}
			}
			if version == "" {
				return claimed{}, false
			}
			n := s.Spec.Names
			return claimed{
				gv: schema.GroupVersion{Group: s.Spec.Group, Version: version},
				resource: metav1.APIResource{
					Name: n.Plural, SingularName: singular(n.Singular, n.Kind), Namespaced: s.Spec.Scope == "Namespaced", Kind: n.Kind,
					Verbs:      metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
					ShortNames: n.ShortNames, Categories: n.Categories,
				},
				schema: s,
			}, true
		}
	}
	return claimed{}, false
}
