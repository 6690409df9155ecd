package discovery

import (
	"reflect"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// aggregatedGroup is a group whose versions each have one resource,
// <group's first label>s.
func aggregatedGroup(name string, versions ...string) apidiscoveryv2.APIGroupDiscovery {
	g := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: name}}
	resource := strings.Split(name, ".")[0] + "s"
	for _, v := range versions {
		g.Versions = append(g.Versions, apidiscoveryv2.APIVersionDiscovery{Version: v, Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: resource}}})
	}
	return g
}

func legacyGroup(name string, versions ...string) metav1.APIGroup {
	g := metav1.APIGroup{Name: name}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

func TestMerge(t *testing.T) {
	builtinGVs := map[schema.GroupVersion]bool{
		{Group: "apps", Version: "v1"}:                true,
		{Group: "zz.k8s.io", Version: "v1"}:           true,
		{Group: "zz.k8s.io", Version: "v1beta1"}:      true,
		{Group: "coordination.k8s.io", Version: "v1"}: true,
	}
	apis := newCRDAPIs([]*apiextensionsv1.CustomResourceDefinition{
		newCRD("example.com", "Widget"),
		newCRD("a.io", "Thing"),
		newCRD("zz.k8s.io", "Extra", withVersions(testVersion("v1", true, true), testVersion("v2alpha1", true, false))),
		// Shadowed by the built-in zz.k8s.io/v1 zzs.
		newCRD("zz.k8s.io", "Zz", withVersions(testVersion("v1", true, true))),
	}, func(gv schema.GroupVersion, resource, _ string) bool {
		return builtinGVs[gv] && resource == strings.Split(gv.Group, ".")[0]+"s"
	})

	aggregatedBuiltin := []apidiscoveryv2.APIGroupDiscovery{
		aggregatedGroup("zz.k8s.io", "v1", "v1beta1"),
		aggregatedGroup("apps", "v1"),
		aggregatedGroup("coordination.k8s.io", "v1"),
	}
	var got []string
	for _, g := range mergeAggregated(aggregatedBuiltin, apis) {
		d := g.Name + ":"
		for _, v := range g.Versions {
			d += " " + v.Version + "["
			for _, r := range v.Resources {
				d += " " + r.Resource
			}
			d += " ]"
		}
		got = append(got, d)
	}
	want := []string{
		"zz.k8s.io: v1[ extras zzs ] v1beta1[ zzs ] v2alpha1[ extras ]",
		"apps: v1[ appss ]",
		"coordination.k8s.io: v1[ coordinations ]",
		"a.io: v1[ things ]",
		"example.com: v1[ widgets ]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("aggregated = %q\nwant %q", got, want)
	}
	if len(aggregatedBuiltin[0].Versions) != 2 || len(aggregatedBuiltin[0].Versions[0].Resources) != 1 {
		t.Errorf("the built-in input was modified")
	}

	legacyBuiltin := []metav1.APIGroup{legacyGroup("zz.k8s.io", "v1", "v1beta1"), legacyGroup("apps", "v1"), legacyGroup("coordination.k8s.io", "v1")}
	got = nil
	for _, g := range mergeLegacyGroups(legacyBuiltin, apis) {
		d := g.Name + " (" + g.PreferredVersion.Version + "):"
		for _, v := range g.Versions {
			d += " " + v.GroupVersion
		}
		got = append(got, d)
	}
	want = []string{
		"zz.k8s.io (v1): zz.k8s.io/v1 zz.k8s.io/v1beta1 zz.k8s.io/v2alpha1",
		"apps (v1): apps/v1",
		"coordination.k8s.io (v1): coordination.k8s.io/v1",
		"a.io (v1): a.io/v1",
		"example.com (v1): example.com/v1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("legacy = %q\nwant %q", got, want)
	}
	if len(legacyBuiltin[0].Versions) != 2 {
		t.Errorf("the built-in input was modified")
	}

	builtinResources := []metav1.APIResource{{Name: "zzs"}, {Name: "zzs/status"}}
	got = nil
	for _, r := range mergeResourceList(builtinResources, apis.groupVersion(schema.GroupVersion{Group: "zz.k8s.io", Version: "v1"})) {
		got = append(got, r.Name)
	}
	if want := []string{"extras", "extras/scale", "extras/status", "zzs", "zzs/status"}; !reflect.DeepEqual(got, want) {
		t.Errorf("resource list = %q\nwant %q", got, want)
	}
	if len(builtinResources) != 2 || builtinResources[0].Name != "zzs" {
		t.Errorf("the built-in input was modified")
	}
}
