package discovery

import (
	"sort"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The merge functions put the groups of a cluster's CRDs behind the built-in
// ones, as kube-apiserver orders them (built-in groups have a higher group
// priority than the 1000 given to CRD groups, which then sort by name). The
// CRD resources of a built-in group version join its built-in resources; a
// CRD version a built-in group does not have is appended to the built-in
// versions, so the built-in preferred version stays preferred. The CRD model
// never holds a resource that is also built in.

// mergeAggregated returns the built-in aggregated discovery groups followed
// by those of the CRDs. The inputs are not modified.
func mergeAggregated(builtin []apidiscoveryv2.APIGroupDiscovery, apis crdAPIs) []apidiscoveryv2.APIGroupDiscovery {
	merged := make([]apidiscoveryv2.APIGroupDiscovery, 0, len(builtin)+len(apis.groups))
	seen := make(map[string]bool, len(builtin))
	for _, g := range builtin {
		seen[g.Name] = true
		if cg := apis.group(g.Name); cg != nil {
			g.Versions = mergeAggregatedVersions(g.Versions, cg)
		}
		merged = append(merged, g)
	}
	for i := range apis.groups {
		if !seen[apis.groups[i].name] {
			merged = append(merged, apis.groups[i].aggregated())
		}
	}
	return merged
}

// mergeAggregatedVersions adds the CRD resources and versions of a group to
// its built-in versions.
func mergeAggregatedVersions(builtin []apidiscoveryv2.APIVersionDiscovery, g *crdGroup) []apidiscoveryv2.APIVersionDiscovery {
	versions := make([]apidiscoveryv2.APIVersionDiscovery, 0, len(builtin)+len(g.versions))
	seen := make(map[string]bool, len(builtin))
	for _, v := range builtin {
		seen[v.Version] = true
		if cv := g.version(v.Version); cv != nil {
			resources := make([]apidiscoveryv2.APIResourceDiscovery, 0, len(v.Resources)+len(cv.aggregated))
			resources = append(resources, v.Resources...)
			resources = append(resources, cv.aggregated...)
			sort.SliceStable(resources, func(i, j int) bool { return resources[i].Resource < resources[j].Resource })
			v.Resources = resources
		}
		versions = append(versions, v)
	}
	for i := range g.versions {
		if !seen[g.versions[i].name] {
			versions = append(versions, g.versions[i].aggregatedVersion())
		}
	}
	return versions
}

// mergeLegacyGroups returns the built-in legacy discovery groups followed by
// those of the CRDs. The inputs are not modified.
func mergeLegacyGroups(builtin []metav1.APIGroup, apis crdAPIs) []metav1.APIGroup {
	merged := make([]metav1.APIGroup, 0, len(builtin)+len(apis.groups))
	seen := make(map[string]bool, len(builtin))
	for _, g := range builtin {
		seen[g.Name] = true
		if cg := apis.group(g.Name); cg != nil {
			g = mergeLegacyGroup(g, cg)
		}
		merged = append(merged, g)
	}
	for i := range apis.groups {
		if !seen[apis.groups[i].name] {
			merged = append(merged, apis.groups[i].apiGroup())
		}
	}
	return merged
}

// mergeLegacyGroup appends the CRD versions a built-in group does not have
// to it.
func mergeLegacyGroup(builtin metav1.APIGroup, g *crdGroup) metav1.APIGroup {
	versions := make([]metav1.GroupVersionForDiscovery, 0, len(builtin.Versions)+len(g.versions))
	versions = append(versions, builtin.Versions...)
	seen := make(map[string]bool, len(builtin.Versions))
	for _, v := range builtin.Versions {
		seen[v.Version] = true
	}
	for _, v := range g.groupVersionsForDiscovery() {
		if !seen[v.Version] {
			versions = append(versions, v)
		}
	}
	builtin.Versions = versions
	return builtin
}

// mergeResourceList adds the CRD resources of a built-in group version to
// its legacy discovery document, sorted by name as the endpoint installer
// sorts them (a subresource follows its resource). The inputs are not
// modified.
func mergeResourceList(builtin []metav1.APIResource, v *crdVersion) []metav1.APIResource {
	resources := make([]metav1.APIResource, 0, len(builtin)+len(v.resources))
	resources = append(resources, builtin...)
	resources = append(resources, v.resources...)
	sort.SliceStable(resources, func(i, j int) bool { return resources[i].Name < resources[j].Name })
	return resources
}
