package garbagecollector

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestResourceSync(t *testing.T) {
	widgets := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	for _, tc := range []struct {
		name       string
		key        string
		crds       []*apiextensionsv1.CustomResourceDefinition
		builtin    bool
		current    string
		wantEnsure string
		wantRemove bool
	}{
		{name: "first CRD starts a monitor", key: "widgets.example.com", crds: []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v1", "v1")}, wantEnsure: "v1"},
		{name: "not yet established", key: "widgets.example.com", crds: []*apiextensionsv1.CustomResourceDefinition{crd("a", false, "v1", "v1")}},
		{name: "same CRD in another cluster", key: "widgets.example.com", current: "v1", crds: []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v1", "v1"), crd("b", true, "v1", "v1")}},
		{name: "version dropped", key: "widgets.example.com", current: "v1", crds: []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v2", "v2")}, wantEnsure: "v2"},
		{name: "last CRD gone", key: "widgets.example.com", current: "v1", wantRemove: true},
		{name: "built-in resource", key: "widgets.example.com", builtin: true, crds: []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v1", "v1")}},
		{name: "not a CRD name", key: "widgets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ensured []schema.GroupVersionResource
			removed := false
			r := &resourceSync{
				crdsNamed: func(name string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
					if name != tc.key {
						t.Errorf("crdsNamed(%q), want %q", name, tc.key)
					}
					return tc.crds, nil
				},
				isBuiltin:        func(gr schema.GroupResource) bool { return tc.builtin },
				monitoredVersion: func(gr schema.GroupResource) (string, bool) { return tc.current, tc.current != "" },
				ensure: func(gvr schema.GroupVersionResource) error {
					ensured = append(ensured, gvr)
					return nil
				},
				remove: func(gr schema.GroupResource) {
					if gr != widgets {
						t.Errorf("remove(%s), want %s", gr, widgets)
					}
					removed = true
				},
			}
			if _, err := r.Reconcile(t.Context(), reconciler.Key{Name: tc.key}); err != nil {
				t.Fatal(err)
			}
			if tc.wantEnsure == "" && len(ensured) > 0 || tc.wantEnsure != "" && (len(ensured) != 1 || ensured[0] != widgets.WithVersion(tc.wantEnsure)) {
				t.Errorf("ensured %v, want %q", ensured, tc.wantEnsure)
			}
			if removed != tc.wantRemove {
				t.Errorf("removed = %v, want %v", removed, tc.wantRemove)
			}
		})
	}
}
