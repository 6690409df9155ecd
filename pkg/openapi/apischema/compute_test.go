package apischema

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestComputeSchemas: the compute schemas build, carry kcp's names, and
// validate a Location's selector labels as label keys and values, which
// openapi-gen alone does not say.
func TestComputeSchemas(t *testing.T) {
	want := map[string]string{"synctargets": "workload.kcp.io", "locations": "scheduling.kcp.io", "placements": "scheduling.kcp.io"}
	for _, r := range Compute() {
		s, err := Schema(r)
		if err != nil {
			t.Fatalf("%s: %v", r.Names.Plural, err)
		}
		if want[s.Spec.Names.Plural] != s.Spec.Group || s.Spec.Scope != apiextensionsv1.ClusterScoped {
			t.Errorf("%s: group %q scope %q", s.Name, s.Spec.Group, s.Spec.Scope)
		}
		delete(want, s.Spec.Names.Plural)
		if s.Spec.Versions[0].Subresources.Status == nil {
			t.Errorf("%s has no status subresource", s.Name)
		}
		if s.Spec.Names.Plural != "locations" {
			continue
		}
		props, err := s.Spec.Versions[0].GetSchema()
		if err != nil {
			t.Fatal(err)
		}
		item := props.Properties["spec"].Properties["availableSelectorLabels"].Items.Schema
		if item.Properties["key"].Pattern != labelKeyPattern || *item.Properties["key"].MaxLength != 255 {
			t.Errorf("availableSelectorLabels[].key: %+v", item.Properties["key"])
		}
		values := item.Properties["values"]
		if values.Items.Schema.Pattern != labelValuePattern || *values.Items.Schema.MaxLength != 63 || *values.MinItems != 1 {
			t.Errorf("availableSelectorLabels[].values: %+v", values)
		}
		gvr := props.Properties["spec"].Properties["resource"]
		if len(gvr.Properties["resource"].Enum) != 1 || string(gvr.Properties["resource"].Enum[0].Raw) != `"synctargets"` {
			t.Errorf("spec.resource.resource enum: %+v", gvr.Properties["resource"].Enum)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing schemas: %v", want)
	}
}
