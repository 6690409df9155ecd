package namespace

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeletableResources(t *testing.T) {
	all := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Namespaced: true, Verbs: all},
			{Name: "namespaces", Namespaced: false, Verbs: all},
			{Name: "serviceaccounts/token", Namespaced: true, Verbs: []string{"create"}},
			{Name: "secrets", Namespaced: true, Verbs: []string{"delete", "list"}},
			{Name: "bindings", Namespaced: true, Verbs: []string{"create"}},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Namespaced: true, Verbs: []string{"deletecollection", "list"}},
			{Name: "gadgets", Namespaced: true, Verbs: []string{"delete", "get"}},
		}},
		{GroupVersion: "a/b/c", APIResources: []metav1.APIResource{{Name: "broken", Namespaced: true, Verbs: all}}},
		nil,
	}
	got, err := deletableResources(lists)
	if err == nil {
		t.Errorf("deletableResources() accepted an unparsable group version")
	}
	want := []string{"configmaps/v1 collection=true", "secrets/v1 collection=false", "widgets.example.com/v1 collection=true"}
	if len(got) != len(want) {
		t.Fatalf("deletableResources() = %v, want %v", got, want)
	}
	for i, r := range got {
		s := r.GroupResource().String() + "/" + r.Version + " collection=" + map[bool]string{true: "true", false: "false"}[r.deleteCollection]
		if s != want[i] {
			t.Errorf("resource %d = %s, want %s", i, s, want[i])
		}
	}
}
