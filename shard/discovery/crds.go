package discovery

import (
	"sort"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	genericdiscovery "k8s.io/apiserver/pkg/endpoints/discovery"
)

// crdAPIs are the API group versions that the CRDs of one logical cluster add
// to the built-in ones. It is what apiextensions-apiserver's discovery
// controller computes, restricted to one cluster.
type crdAPIs struct {
	// groups sorted by name; never the core group.
	groups []crdGroup
	// core holds the CRD resources of the core group version v1 (/api/v1),
	// nil without any. The core group is never one of groups: /apis lists
	// no group "". Other versions of the core group are not served.
	core *crdVersion
}

// coreV1 is the core group version, the only one of the core group that
// CRDs serve.
var coreV1 = schema.GroupVersion{Version: "v1"}

// crdGroup is one API group served by CRDs.
type crdGroup struct {
	name string
	// versions by kube-aware version priority, preferred first.
	versions []crdVersion
}

// crdVersion is one group version served by CRDs.
type crdVersion struct {
	name string
	// resources is the legacy APIResourceList content: each resource
	// followed by its status and scale subresources.
	resources []metav1.APIResource
	// aggregated is the aggregated discovery content, sorted by resource.
	aggregated []apidiscoveryv2.APIResourceDiscovery
	// crds serve this version, sorted by name; OpenAPI is built from them.
	crds []*apiextensionsv1.CustomResourceDefinition
}

var (
	crdVerbs            = metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	terminatingCRDVerbs = metav1.Verbs{"delete", "deletecollection", "get", "list", "watch"}
	subresourceVerbs    = metav1.Verbs{"get", "patch", "update"}
)

// newCRDAPIs computes the group versions served by crds. Only Established
// CRDs and served versions count. A CRD version for which builtin returns
// true (a built-in resource of its group version has its plural or kind)
// is left out: requests for it reach the built-in resource. Other CRD
// resources of a built-in group version are kept: the shard serves them
// next to the built-in ones.
func newCRDAPIs(crds []*apiextensionsv1.CustomResourceDefinition, builtin func(gv schema.GroupVersion, resource, kind string) bool) crdAPIs {
	sorted := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(crds))
	for _, crd := range crds {
		if crd != nil && apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			sorted = append(sorted, crd)
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	versions := map[schema.GroupVersion]*crdVersion{}
	for _, crd := range sorted {
		storageVersionHash := crdStorageVersionHash(crd)
		for _, v := range crd.Spec.Versions {
			gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
			if !v.Served || (gv.Group == "" && gv != coreV1) || builtin(gv, crd.Status.AcceptedNames.Plural, crd.Status.AcceptedNames.Kind) {
				continue
			}
			cv := versions[gv]
			if cv == nil {
				cv = &crdVersion{name: v.Name}
				versions[gv] = cv
			}
			cv.add(crd, gv, storageVersionHash)
		}
	}

	var apis crdAPIs
	groups := map[string]*crdGroup{}
	for gv, cv := range versions {
		sort.SliceStable(cv.aggregated, func(i, j int) bool { return cv.aggregated[i].Resource < cv.aggregated[j].Resource })
		if gv == coreV1 {
			apis.core = cv
			continue
		}
		g := groups[gv.Group]
		if g == nil {
			g = &crdGroup{name: gv.Group}
			groups[gv.Group] = g
		}
		g.versions = append(g.versions, *cv)
	}
	apis.groups = make([]crdGroup, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g.versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(g.versions[i].name, g.versions[j].name) > 0
		})
		apis.groups = append(apis.groups, *g)
	}
	sort.Slice(apis.groups, func(i, j int) bool { return apis.groups[i].name < apis.groups[j].name })
	return apis
}

// add adds crd's resource and subresources to the version.
func (cv *crdVersion) add(crd *apiextensionsv1.CustomResourceDefinition, gv schema.GroupVersion, storageVersionHash string) {
	names := crd.Status.AcceptedNames
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	verbs := crdVerbs
	if apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating) {
		verbs = terminatingCRDVerbs
	}
	scope := apidiscoveryv2.ScopeCluster
	if namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	kind := &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: names.Kind}

	cv.crds = append(cv.crds, crd)
	cv.resources = append(cv.resources, metav1.APIResource{
		Name:               names.Plural,
		SingularName:       names.Singular,
		Namespaced:         namespaced,
		Kind:               names.Kind,
		Verbs:              verbs,
		ShortNames:         names.ShortNames,
		Categories:         names.Categories,
		StorageVersionHash: storageVersionHash,
	})
	resource := apidiscoveryv2.APIResourceDiscovery{
		Resource:         names.Plural,
		SingularResource: names.Singular,
		Scope:            scope,
		ResponseKind:     kind,
		Verbs:            verbs,
		ShortNames:       names.ShortNames,
		Categories:       names.Categories,
	}

	// The version was validated when the CRD was accepted, so the error
	// (conflicting per-version and top-level subresources) cannot happen for
	// an Established CRD; treat it as no subresources.
	subresources, _ := apiextensionshelpers.GetSubresourcesForVersion(crd, gv.Version)
	if subresources != nil && subresources.Status != nil {
		resource.Subresources = append(resource.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  "status",
			ResponseKind: kind,
			Verbs:        subresourceVerbs,
		})
		cv.resources = append(cv.resources, metav1.APIResource{
			Name:       names.Plural + "/status",
			Namespaced: namespaced,
			Kind:       names.Kind,
			Verbs:      subresourceVerbs,
		})
	}
	if subresources != nil && subresources.Scale != nil {
		scale := &metav1.GroupVersionKind{Group: autoscalingv1.GroupName, Version: "v1", Kind: "Scale"}
		resource.Subresources = append(resource.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  "scale",
			ResponseKind: scale,
			Verbs:        subresourceVerbs,
		})
		cv.resources = append(cv.resources, metav1.APIResource{
			Name:       names.Plural + "/scale",
			Namespaced: namespaced,
			Group:      scale.Group,
			Version:    scale.Version,
			Kind:       scale.Kind,
			Verbs:      subresourceVerbs,
		})
	}
	cv.aggregated = append(cv.aggregated, resource)
}

// crdStorageVersionHash is the storage version hash of a CRD, computed from
// its served storage version as apiextensions-apiserver does.
func crdStorageVersionHash(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Served && v.Storage {
			return genericdiscovery.StorageVersionHash(crd.Spec.Group, v.Name, crd.Spec.Names.Kind)
		}
	}
	return ""
}

// empty tells whether the CRDs serve nothing.
func (a crdAPIs) empty() bool { return len(a.groups) == 0 && a.core == nil }

// crdGroupVersion is a group version the CRDs serve.
type crdGroupVersion struct {
	gv      schema.GroupVersion
	version *crdVersion
}

// groupVersions lists every group version the CRDs serve: core v1 first,
// then the named groups in order.
func (a crdAPIs) groupVersions() []crdGroupVersion {
	var gvs []crdGroupVersion
	if a.core != nil {
		gvs = append(gvs, crdGroupVersion{gv: coreV1, version: a.core})
	}
	for i := range a.groups {
		g := &a.groups[i]
		for j := range g.versions {
			gvs = append(gvs, crdGroupVersion{gv: schema.GroupVersion{Group: g.name, Version: g.versions[j].name}, version: &g.versions[j]})
		}
	}
	return gvs
}

// servesCoreGroup tells whether any of crds is of the core group, so that
// the built-in core resources are needed to merge them.
func servesCoreGroup(crds []*apiextensionsv1.CustomResourceDefinition) bool {
	for _, crd := range crds {
		if crd != nil && crd.Spec.Group == "" {
			return true
		}
	}
	return false
}

// group returns the named group, or nil.
func (a crdAPIs) group(name string) *crdGroup {
	i := sort.Search(len(a.groups), func(i int) bool { return a.groups[i].name >= name })
	if i < len(a.groups) && a.groups[i].name == name {
		return &a.groups[i]
	}
	return nil
}

// groupVersion returns the version of a group, or nil.
func (a crdAPIs) groupVersion(gv schema.GroupVersion) *crdVersion {
	g := a.group(gv.Group)
	if g == nil {
		return nil
	}
	return g.version(gv.Version)
}

// version returns the named version, or nil.
func (g *crdGroup) version(name string) *crdVersion {
	for i := range g.versions {
		if g.versions[i].name == name {
			return &g.versions[i]
		}
	}
	return nil
}

// groupVersionsForDiscovery lists the group's versions in priority order.
func (g *crdGroup) groupVersionsForDiscovery() []metav1.GroupVersionForDiscovery {
	versions := make([]metav1.GroupVersionForDiscovery, 0, len(g.versions))
	for _, v := range g.versions {
		versions = append(versions, metav1.GroupVersionForDiscovery{GroupVersion: g.name + "/" + v.name, Version: v.name})
	}
	return versions
}

// apiGroup is the legacy discovery document of the group.
func (g *crdGroup) apiGroup() metav1.APIGroup {
	versions := g.groupVersionsForDiscovery()
	return metav1.APIGroup{Name: g.name, Versions: versions, PreferredVersion: versions[0]}
}

// aggregated is the aggregated discovery document of the group.
func (g *crdGroup) aggregated() apidiscoveryv2.APIGroupDiscovery {
	d := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
	for _, v := range g.versions {
		d.Versions = append(d.Versions, v.aggregatedVersion())
	}
	return d
}

// aggregatedVersion is the aggregated discovery document of the version.
func (v *crdVersion) aggregatedVersion() apidiscoveryv2.APIVersionDiscovery {
	return apidiscoveryv2.APIVersionDiscovery{
		Version:   v.name,
		Resources: v.aggregated,
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
	}
}
