package discovery

import (
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The merge functions put the groups of a cluster's CRDs behind the built-in
// ones, as kube-apiserver orders them (built-in groups have a higher group
// priority than the 1000 given to CRD groups, which then sort by name). A CRD
// version of a built-in group is appended to the built-in versions, so the
// built-in preferred version stays preferred. The CRD model never holds a
// group version that is also built in.

// mergeAggregated returns the built-in aggregated discovery groups followed
// by those of the CRDs. The inputs are not modified.
func mergeAggregated(builtin []apidiscoveryv2.APIGroupDiscovery, apis crdAPIs) []apidiscoveryv2.APIGroupDiscovery {
	merged := make([]apidiscoveryv2.APIGroupDiscovery, 0, len(builtin)+len(apis.groups))
	seen := make(map[string]bool, len(builtin))
	for _, g := range builtin {
		seen[g.Name] = true
		if cg := apis.group(g.Name); cg != nil {
			versions := make([]apidiscoveryv2.APIVersionDiscovery, 0, len(g.Versions)+len(cg.versions))
			versions = append(versions, g.Versions...)
			for _, v := range cg.versions {
				versions = append(versions, v.aggregatedVersion())
			}
			g.Versions = versions
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

// mergeLegacyGroup appends the CRD versions of a built-in group to it.
func mergeLegacyGroup(builtin metav1.APIGroup, g *crdGroup) metav1.APIGroup {
	versions := make([]metav1.GroupVersionForDiscovery, 0, len(builtin.Versions)+len(g.versions))
	versions = append(versions, builtin.Versions...)
	versions = append(versions, g.groupVersionsForDiscovery()...)
	builtin.Versions = versions
	return builtin
}
