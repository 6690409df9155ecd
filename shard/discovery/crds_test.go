package discovery

import (
	"reflect"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericdiscovery "k8s.io/apiserver/pkg/endpoints/discovery"
)

// describe summarises a model as "group/version: resource,resource".
func describe(a crdAPIs) []string {
	var out []string
	for _, g := range a.groups {
		for _, v := range g.versions {
			d := g.name + "/" + v.name + ":"
			for _, r := range v.resources {
				d += " " + r.Name
			}
			out = append(out, d)
		}
	}
	return out
}

func noBuiltins(schema.GroupVersion, string, string) bool { return false }

func TestNewCRDAPIs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		crds    []*apiextensionsv1.CustomResourceDefinition
		builtin func(gv schema.GroupVersion, resource, kind string) bool
		want    []string
	}{
		{
			name: "none",
			want: nil,
		},
		{
			name: "a CRD with subresources",
			crds: []*apiextensionsv1.CustomResourceDefinition{newCRD("example.com", "Widget")},
			want: []string{"example.com/v1: widgets widgets/status widgets/scale"},
		},
		{
			name: "not established",
			crds: []*apiextensionsv1.CustomResourceDefinition{newCRD("example.com", "Widget", notEstablished)},
			want: nil,
		},
		{
			name: "only served versions, by kube-aware priority",
			crds: []*apiextensionsv1.CustomResourceDefinition{newCRD("example.com", "Widget", withoutSubresources, withVersions(
				testVersion("v1alpha1", true, false), testVersion("v10", true, false), testVersion("v2", true, true),
				testVersion("v1beta2", true, false), testVersion("v3", false, false), testVersion("foo", true, false)), withoutSubresources)},
			want: []string{
				"example.com/v10: widgets", "example.com/v2: widgets", "example.com/v1beta2: widgets",
				"example.com/v1alpha1: widgets", "example.com/foo: widgets",
			},
		},
		{
			name: "CRDs of one group share versions, sorted by name",
			crds: []*apiextensionsv1.CustomResourceDefinition{
				newCRD("example.com", "Widget", withoutSubresources),
				newCRD("example.com", "Gadget", withVersions(testVersion("v1", true, true), testVersion("v2", true, false)), withoutSubresources),
			},
			want: []string{"example.com/v2: gadgets", "example.com/v1: gadgets widgets"},
		},
		{
			name: "groups sorted by name",
			crds: []*apiextensionsv1.CustomResourceDefinition{newCRD("zeta.io", "Zed", withoutSubresources), newCRD("alpha.io", "Al", withoutSubresources)},
			want: []string{"alpha.io/v1: als", "zeta.io/v1: zeds"},
		},
		{
			name: "a built-in resource of the same name shadows a CRD in its group version",
			crds: []*apiextensionsv1.CustomResourceDefinition{newCRD("coordination.k8s.io", "Fake", withoutSubresources,
				withVersions(testVersion("v1", true, true), testVersion("v2alpha1", true, false)), withoutSubresources)},
			builtin: func(gv schema.GroupVersion, resource, _ string) bool {
				return gv == schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"} && resource == "fakes"
			},
			want: []string{"coordination.k8s.io/v2alpha1: fakes"},
		},
		{
			name: "a built-in resource of the same kind shadows a CRD in its group version",
			crds: []*apiextensionsv1.CustomResourceDefinition{newCRD("coordination.k8s.io", "Lease", withoutSubresources)},
			builtin: func(gv schema.GroupVersion, _, kind string) bool {
				return gv == schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"} && kind == "Lease"
			},
		},
		{
			name: "other CRD resources of a built-in group version are kept",
			crds: []*apiextensionsv1.CustomResourceDefinition{newCRD("coordination.k8s.io", "Fake", withoutSubresources,
				withVersions(testVersion("v1", true, true), testVersion("v2alpha1", true, false)), withoutSubresources)},
			builtin: func(gv schema.GroupVersion, resource, kind string) bool {
				return gv == schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"} && (resource == "leases" || kind == "Lease")
			},
			want: []string{"coordination.k8s.io/v1: fakes", "coordination.k8s.io/v2alpha1: fakes"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			builtin := tc.builtin
			if builtin == nil {
				builtin = noBuiltins
			}
			if got := describe(newCRDAPIs(tc.crds, builtin)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCRDResourceDescriptions(t *testing.T) {
	crd := newCRD("example.com", "Widget", clusterScoped, terminating, withNames([]string{"wd"}, []string{"all"}),
		withVersions(testVersion("v1", true, false), testVersion("v2", true, true)))
	apis := newCRDAPIs([]*apiextensionsv1.CustomResourceDefinition{crd}, noBuiltins)
	v1 := apis.groupVersion(schema.GroupVersion{Group: "example.com", Version: "v1"})
	if v1 == nil {
		t.Fatal("no example.com/v1")
	}
	readOnly := metav1.Verbs{"delete", "deletecollection", "get", "list", "watch"}
	sub := metav1.Verbs{"get", "patch", "update"}
	wantLegacy := []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Kind: "Widget", Verbs: readOnly, ShortNames: []string{"wd"}, Categories: []string{"all"},
			StorageVersionHash: genericdiscovery.StorageVersionHash("example.com", "v2", "Widget")},
		{Name: "widgets/status", Kind: "Widget", Verbs: sub},
		{Name: "widgets/scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: sub},
	}
	if !reflect.DeepEqual(v1.resources, wantLegacy) {
		t.Errorf("legacy = %+v\nwant %+v", v1.resources, wantLegacy)
	}
	kind := &metav1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	wantAggregated := []apidiscoveryv2.APIResourceDiscovery{{
		Resource: "widgets", SingularResource: "widget", Scope: apidiscoveryv2.ScopeCluster, ResponseKind: kind,
		Verbs: readOnly, ShortNames: []string{"wd"}, Categories: []string{"all"},
		Subresources: []apidiscoveryv2.APISubresourceDiscovery{
			{Subresource: "status", ResponseKind: kind, Verbs: sub},
			{Subresource: "scale", ResponseKind: &metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: sub},
		},
	}}
	if !reflect.DeepEqual(v1.aggregated, wantAggregated) {
		t.Errorf("aggregated = %+v\nwant %+v", v1.aggregated, wantAggregated)
	}
	g := apis.group("example.com")
	if got := g.apiGroup(); got.PreferredVersion.Version != "v2" || len(got.Versions) != 2 {
		t.Errorf("APIGroup = %+v", got)
	}
	if apis.group("other.io") != nil || apis.groupVersion(schema.GroupVersion{Group: "example.com", Version: "v3"}) != nil {
		t.Errorf("unknown groups or versions are found")
	}
}
