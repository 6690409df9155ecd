package garbagecollector

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestBuiltinResources(t *testing.T) {
	all := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	b, err := builtinResources([]*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: all},
			{Name: "namespaces", Kind: "Namespace", Verbs: all},
			{Name: "namespaces/finalize", Kind: "Namespace", Verbs: []string{"update"}},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: all},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "unwatchables", Kind: "Unwatchable", Verbs: []string{"get", "list", "delete"}},
		}},
		{GroupVersion: "a/b/c"},
	})
	if err == nil {
		t.Error("builtinResources() accepted an unparsable group version")
	}
	want := []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "namespaces"}}
	if len(b.resources) != len(want) || b.resources[0] != want[0] || b.resources[1] != want[1] {
		t.Errorf("monitored = %v, want %v", b.resources, want)
	}
	for gk, info := range map[schema.GroupKind]kindInfo{
		{Kind: "ConfigMap"}:                         {resource: want[0], namespaced: true},
		{Kind: "Namespace"}:                         {resource: want[1]},
		{Kind: "Event"}:                             {resource: schema.GroupVersionResource{Version: "v1", Resource: "events"}, namespaced: true},
		{Group: "example.com", Kind: "Unwatchable"}: {resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "unwatchables"}},
	} {
		if got, ok := b.kinds[gk]; !ok || got != info {
			t.Errorf("kind %s = %+v, want %+v", gk, got, info)
		}
	}
	if _, ok := b.kinds[schema.GroupKind{Kind: "Binding"}]; ok {
		t.Error("a kind that cannot be read resolves")
	}
	if !b.has(schema.GroupResource{Resource: "configmaps"}) || b.has(schema.GroupResource{Resource: "events"}) {
		t.Error("has() is wrong")
	}
}

func crd(cluster logicalcluster.Name, established bool, storage string, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", Annotations: map[string]string{logicalcluster.AnnotationKey: string(cluster)}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
		},
	}
	for _, v := range versions {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: v == storage})
	}
	if established {
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	}
	return c
}

func TestChooseVersion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		crds    []*apiextensionsv1.CustomResourceDefinition
		current string
		want    string
		wantOK  bool
	}{
		{name: "no CRD"},
		{name: "not established", crds: []*apiextensionsv1.CustomResourceDefinition{crd("a", false, "v1", "v1")}},
		{name: "storage version", crds: []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v2", "v1", "v2")}, want: "v2", wantOK: true},
		{
			name: "first cluster by name decides",
			crds: []*apiextensionsv1.CustomResourceDefinition{crd("b", true, "v2", "v2"), crd("a", true, "v1", "v1")},
			want: "v1", wantOK: true,
		},
		{
			name:    "current version kept while served",
			crds:    []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v2", "v1", "v2")},
			current: "v1", want: "v1", wantOK: true,
		},
		{
			name:    "current version replaced when no longer served",
			crds:    []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v2", "v2")},
			current: "v1", want: "v2", wantOK: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := chooseVersion(tc.crds, tc.current)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("chooseVersion() = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestCRDKind(t *testing.T) {
	crds := []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v1", "v1", "v2")}
	widgets := schema.GroupVersionResource{Group: "example.com", Resource: "widgets"}
	for _, tc := range []struct {
		gvk    schema.GroupVersionKind
		want   kindInfo
		wantOK bool
	}{
		{gvk: schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}, want: kindInfo{resource: widgets.GroupResource().WithVersion("v2"), namespaced: true}, wantOK: true},
		{gvk: schema.GroupVersionKind{Group: "example.com", Version: "v9", Kind: "Widget"}, want: kindInfo{resource: widgets.GroupResource().WithVersion("v1"), namespaced: true}, wantOK: true},
		{gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}},
		{gvk: schema.GroupVersionKind{Group: "other.com", Version: "v1", Kind: "Widget"}},
	} {
		got, ok := crdKind(crds, tc.gvk)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("crdKind(%s) = %+v, %v; want %+v, %v", tc.gvk, got, ok, tc.want, tc.wantOK)
		}
	}
}
