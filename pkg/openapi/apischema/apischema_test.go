package apischema

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
)

var extScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
}()

// internalProps converts a v1 schema to the internal one.
func internalProps(t *testing.T, props *apiextensionsv1.JSONSchemaProps) *apiextensions.JSONSchemaProps {
	t.Helper()
	var out apiextensions.JSONSchemaProps
	if err := extScheme.Convert(props, &out, nil); err != nil {
		t.Fatalf("converting the schema to internal: %v", err)
	}
	return &out
}

// structural returns the structural schema of props, failing on any
// violation of the structural rules.
func structural(t *testing.T, props *apiextensionsv1.JSONSchemaProps) *structuralschema.Structural {
	t.Helper()
	ss, err := structuralschema.NewStructural(internalProps(t, props))
	if err != nil {
		t.Fatalf("NewStructural: %v", err)
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), ss); len(errs) > 0 {
		t.Fatalf("not a structural schema: %v", errs.ToAggregate())
	}
	return ss
}

// versionSchema returns the schema of the only version of s.
func versionSchema(t *testing.T, s *apisv1alpha1.APIResourceSchema) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	if len(s.Spec.Versions) != 1 {
		t.Fatalf("%s has %d versions, want 1", s.Name, len(s.Spec.Versions))
	}
	props, err := s.Spec.Versions[0].GetSchema()
	if err != nil || props == nil {
		t.Fatalf("schema of %s: %v (nil: %t)", s.Name, err, props == nil)
	}
	return props
}

func coreSchema(t *testing.T, plural string) (*apisv1alpha1.APIResourceSchema, *apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	for _, r := range Core() {
		if r.Names.Plural == plural {
			s, err := Schema(r)
			if err != nil {
				t.Fatal(err)
			}
			return s, versionSchema(t, s)
		}
	}
	t.Fatalf("Core has no %s", plural)
	return nil, nil
}

func TestCore(t *testing.T) {
	want := map[string]struct {
		group, kind string
		status      bool
		shortNames  []string
		columns     []string
	}{
		"workspaces":     {"tenancy.kcp.io", "Workspace", true, []string{"ws"}, []string{"Type", "Region", "Phase", "URL", "Age"}},
		"workspacetypes": {"tenancy.kcp.io", "WorkspaceType", true, nil, nil},
		"partitions":     {"topology.kcp.io", "Partition", false, nil, []string{"Owner", "Age"}},
		"partitionsets":  {"topology.kcp.io", "PartitionSet", true, nil, []string{"Count", "Age"}},
		"shards":         {"core.kcp.io", "Shard", true, nil, []string{"Region", "URL", "External URL", "Age"}},
	}
	core := Core()
	if len(core) != len(want) {
		t.Fatalf("Core has %d resources, want %d", len(core), len(want))
	}
	for _, r := range core {
		t.Run(r.Names.Plural+"."+r.Group, func(t *testing.T) {
			w, ok := want[r.Names.Plural]
			if !ok {
				t.Fatalf("unexpected resource %s", r.Names.Plural)
			}
			s, err := Schema(r)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Schema(r)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != again.Name || !reflect.DeepEqual(s, again) {
				t.Errorf("Schema is not stable: %s, then %s", s.Name, again.Name)
			}
			nameRE := regexp.MustCompile(`^v[0-9a-f]{8}\.` + regexp.QuoteMeta(r.Names.Plural+"."+r.Group) + `$`)
			if !nameRE.MatchString(s.Name) {
				t.Errorf("name %q does not match %s", s.Name, nameRE)
			}
			raw, err := json.Marshal(s.Spec)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(raw)
			if prefix := "v" + hex.EncodeToString(sum[:])[:8]; !strings.HasPrefix(s.Name, prefix+".") {
				t.Errorf("name %q does not start with the hash of its spec, %s", s.Name, prefix)
			}

			if s.Spec.Group != w.group || s.Spec.Names.Kind != w.kind || s.Spec.Names.ListKind != w.kind+"List" ||
				s.Spec.Names.Singular != strings.ToLower(w.kind) || s.Spec.Scope != apiextensionsv1.ClusterScoped {
				t.Errorf("group, names or scope: %s %+v %s", s.Spec.Group, s.Spec.Names, s.Spec.Scope)
			}
			if !reflect.DeepEqual(s.Spec.Names.ShortNames, w.shortNames) || !reflect.DeepEqual(s.Spec.Names.Categories, []string{"kcp"}) {
				t.Errorf("short names %v, categories %v", s.Spec.Names.ShortNames, s.Spec.Names.Categories)
			}
			v := s.Spec.Versions[0]
			if v.Name != "v1alpha1" || !v.Served || !v.Storage {
				t.Errorf("version %s served %t storage %t", v.Name, v.Served, v.Storage)
			}
			if (v.Subresources.Status != nil) != w.status || v.Subresources.Scale != nil {
				t.Errorf("subresources %+v, want status %t", v.Subresources, w.status)
			}
			var columns []string
			for _, c := range v.AdditionalPrinterColumns {
				columns = append(columns, c.Name)
			}
			if !reflect.DeepEqual(columns, w.columns) {
				t.Errorf("printer columns %v, want %v", columns, w.columns)
			}

			props := versionSchema(t, s)
			structural(t, props)
			if m := props.Properties["metadata"]; !reflect.DeepEqual(m, apiextensionsv1.JSONSchemaProps{Type: "object"}) {
				t.Errorf("metadata is %+v, want just {type: object}", m)
			}
			for _, p := range []string{"apiVersion", "kind"} {
				if props.Properties[p].Type != "string" {
					t.Errorf("%s is of type %q", p, props.Properties[p].Type)
				}
			}

			crd, err := apisv1alpha1.CRDFromSchema(s, s.Spec.Group)
			if err != nil {
				t.Fatal(err)
			}
			var internal apiextensions.CustomResourceDefinition
			if err := extScheme.Convert(crd, &internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
				t.Errorf("the CRD is not valid: %v", errs.ToAggregate())
			}
		})
	}
}

// TestNameFollowsSpec checks that a change of the spec changes the name.
func TestNameFollowsSpec(t *testing.T) {
	r := Core()[0]
	s, err := Schema(r)
	if err != nil {
		t.Fatal(err)
	}
	r.PrinterColumns = r.PrinterColumns[:1]
	changed, err := Schema(r)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name == changed.Name {
		t.Errorf("two different specs are both named %s", s.Name)
	}
}

var (
	created = metav1.NewTime(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC))
	ready   = conditionsv1alpha1.Condition{
		Type:               "Ready",
		Status:             corev1.ConditionTrue,
		LastTransitionTime: created,
	}
	notReady = conditionsv1alpha1.Condition{
		Type:               "WorkspaceScheduled",
		Status:             corev1.ConditionFalse,
		Severity:           conditionsv1alpha1.ConditionSeverityError,
		Reason:             "Unschedulable",
		Message:            "no shard matches",
		LastTransitionTime: created,
	}
	selector = &metav1.LabelSelector{
		MatchLabels: map[string]string{"region": "eu"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "silver"}},
			{Key: "cordoned", Operator: metav1.LabelSelectorOpDoesNotExist},
		},
	}
)

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              name,
		UID:               "0f0a3f6a-6f0e-4c55-9d0b-3c1c2d7f9a10",
		ResourceVersion:   "42",
		Generation:        3,
		CreationTimestamp: created,
		Labels:            map[string]string{"region": "eu"},
		Annotations:       map[string]string{"kcp.io/cluster": "root"},
		Finalizers:        []string{"core.kcp.io/logicalcluster"},
	}
}

// realistic returns a filled-in object of each resource of Core.
func realistic() map[string]runtime.Object {
	return map[string]runtime.Object{
		"workspaces": &tenancyv1alpha1.Workspace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "tenancy.kcp.io/v1alpha1", Kind: "Workspace"},
			ObjectMeta: meta("team-a"),
			Spec: tenancyv1alpha1.WorkspaceSpec{
				Type:     &tenancyv1alpha1.WorkspaceTypeReference{Name: "team", Path: "root:org"},
				Location: &tenancyv1alpha1.WorkspaceLocation{Selector: selector},
				Cluster:  "2x7kq9f3lz1w",
				URL:      "https://proxy.example.com/clusters/root:org:team-a",
			},
			Status: tenancyv1alpha1.WorkspaceStatus{
				Phase:        corev1alpha1.LogicalClusterPhaseInitializing,
				Conditions:   conditionsv1alpha1.Conditions{ready, notReady},
				Initializers: []corev1alpha1.LogicalClusterInitializer{"root:team", "system:apibindings"},
			},
		},
		"workspacetypes": &tenancyv1alpha1.WorkspaceType{
			TypeMeta:   metav1.TypeMeta{APIVersion: "tenancy.kcp.io/v1alpha1", Kind: "WorkspaceType"},
			ObjectMeta: meta("team"),
			Spec: tenancyv1alpha1.WorkspaceTypeSpec{
				Initializer:               true,
				Extend:                    tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "universal", Path: "root"}}},
				AdditionalWorkspaceLabels: map[string]string{"team": "true"},
				DefaultChildWorkspaceType: &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: "root"},
				LimitAllowedChildren:      &tenancyv1alpha1.WorkspaceTypeSelector{None: true},
				LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{Types: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "organization", Path: "root"}}},
				DefaultAPIBindings:        []tenancyv1alpha1.APIExportReference{{Path: "root", Export: "tenancy.kcp.io"}},
			},
			Status: tenancyv1alpha1.WorkspaceTypeStatus{
				Conditions:        conditionsv1alpha1.Conditions{ready},
				VirtualWorkspaces: []tenancyv1alpha1.VirtualWorkspace{{URL: "https://shard-1.example.com/services/initializingworkspaces/root:team"}},
			},
		},
		"partitions": &topologyv1alpha1.Partition{
			TypeMeta:   metav1.TypeMeta{APIVersion: "topology.kcp.io/v1alpha1", Kind: "Partition"},
			ObjectMeta: meta("eu"),
			Spec:       topologyv1alpha1.PartitionSpec{Selector: selector},
		},
		"partitionsets": &topologyv1alpha1.PartitionSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "topology.kcp.io/v1alpha1", Kind: "PartitionSet"},
			ObjectMeta: meta("regions"),
			Spec:       topologyv1alpha1.PartitionSetSpec{Dimensions: []string{"region"}, ShardSelector: selector},
			Status:     topologyv1alpha1.PartitionSetStatus{Count: 2, Conditions: conditionsv1alpha1.Conditions{ready}},
		},
		"shards": &corev1alpha1.Shard{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.kcp.io/v1alpha1", Kind: "Shard"},
			ObjectMeta: meta("shard-1"),
			Spec: corev1alpha1.ShardSpec{
				BaseURL:             "https://shard-1.example.com:6443",
				ExternalURL:         "https://proxy.example.com",
				VirtualWorkspaceURL: "https://shard-1.example.com:6444",
			},
			Status: corev1alpha1.ShardStatus{
				Capacity:   corev1.ResourceList{"logicalclusters": resource.MustParse("10k"), "cpu": resource.MustParse("1500m")},
				Conditions: conditionsv1alpha1.Conditions{ready, notReady},
			},
		},
	}
}

func toUnstructured(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as the API server sees it: numbers as int64 or float64.
	raw, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return runtime.DeepCopyJSON(toInt64(out).(map[string]any))
}

// toInt64 turns the float64s of whole numbers into int64s, as the API
// server's decoder does.
func toInt64(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = toInt64(e)
		}
	case []any:
		for i, e := range v {
			v[i] = toInt64(e)
		}
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
	}
	return v
}

func validate(t *testing.T, props *apiextensionsv1.JSONSchemaProps, obj map[string]any) field.ErrorList {
	t.Helper()
	validator, _, err := apiservervalidation.NewSchemaValidator(internalProps(t, props))
	if err != nil {
		t.Fatal(err)
	}
	return apiservervalidation.ValidateCustomResource(nil, obj, validator)
}

// TestRealisticObjects validates filled-in objects of each resource and
// prunes them: pruning removing nothing proves no field is missing from the
// schema.
func TestRealisticObjects(t *testing.T) {
	objects := realistic()
	for _, r := range Core() {
		t.Run(r.Names.Plural, func(t *testing.T) {
			_, props := coreSchema(t, r.Names.Plural)
			obj := toUnstructured(t, objects[r.Names.Plural])
			if errs := validate(t, props, obj); len(errs) > 0 {
				t.Errorf("a valid %s does not validate: %v", r.Names.Kind, errs.ToAggregate())
			}
			pruned := runtime.DeepCopyJSON(obj)
			removed := pruning.PruneWithOptions(pruned, structural(t, props), true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
			if len(removed) > 0 || !reflect.DeepEqual(pruned, obj) {
				t.Errorf("pruning removed %v", removed)
			}
		})
	}
}

// TestInvalidObjects checks that objects with fields of the wrong type or
// value fail validation.
func TestInvalidObjects(t *testing.T) {
	for _, tc := range []struct {
		name, plural string
		mutate       func(obj map[string]any)
		wantField    string
	}{
		{"type name is a number", "workspaces", func(o map[string]any) {
			o["spec"].(map[string]any)["type"].(map[string]any)["name"] = int64(5)
		}, "spec.type.name"},
		{"type without a name", "workspaces", func(o map[string]any) {
			delete(o["spec"].(map[string]any)["type"].(map[string]any), "name")
		}, "spec.type.name"},
		{"unknown phase", "workspaces", func(o map[string]any) {
			o["status"].(map[string]any)["phase"] = "Bogus"
		}, "status.phase"},
		{"transition time is not a time", "workspaces", func(o map[string]any) {
			o["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["lastTransitionTime"] = "yesterday"
		}, "status.conditions[0].lastTransitionTime"},
		{"initializers is a string", "workspaces", func(o map[string]any) {
			o["status"].(map[string]any)["initializers"] = "root:team"
		}, "status.initializers"},
		{"match label value is a number", "partitions", func(o map[string]any) {
			o["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)["region"] = int64(1)
		}, "spec.selector.matchLabels.region"},
		{"shard without a base URL", "shards", func(o map[string]any) {
			delete(o["spec"].(map[string]any), "baseURL")
		}, "spec.baseURL"},
		{"capacity is a list", "shards", func(o map[string]any) {
			o["status"].(map[string]any)["capacity"].(map[string]any)["cpu"] = []any{"1"}
		}, "status.capacity.cpu"},
		{"count is a string", "partitionsets", func(o map[string]any) {
			o["status"].(map[string]any)["count"] = "two"
		}, "status.count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, props := coreSchema(t, tc.plural)
			obj := toUnstructured(t, realistic()[tc.plural])
			tc.mutate(obj)
			errs := validate(t, props, obj)
			if len(errs) == 0 {
				t.Fatal("an invalid object validates")
			}
			for _, e := range errs {
				if e.Field == tc.wantField {
					return
				}
			}
			t.Errorf("no error on %s: %v", tc.wantField, errs.ToAggregate())
		})
	}
}

// TestConversions checks the schemas of the types a CRD spells its own way.
func TestConversions(t *testing.T) {
	_, shard := coreSchema(t, "shards")
	capacity := shard.Properties["status"].Properties["capacity"]
	q := capacity.AdditionalProperties.Schema
	if capacity.Type != "object" || q == nil || !q.XIntOrString || q.Type != "" ||
		!reflect.DeepEqual(q.AnyOf, []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}) {
		t.Errorf("capacity is %+v, want a map of int-or-strings", capacity)
	}
	if shard.Properties["spec"].Default != nil {
		t.Errorf("spec of a shard, which requires baseURL, has the default %s", shard.Properties["spec"].Default.Raw)
	}
	if d := shard.Properties["spec"].Properties["baseURL"].Default; d != nil {
		t.Errorf("baseURL has the default %s", d.Raw)
	}

	_, ws := coreSchema(t, "workspaces")
	status := ws.Properties["status"]
	if status.Default == nil || string(status.Default.Raw) != "{}" {
		t.Errorf("status of a workspace has the default %v, want {}", status.Default)
	}
	conds := status.Properties["conditions"]
	if conds.XListType == nil || *conds.XListType != "atomic" {
		t.Errorf("conditions have list type %v, want atomic", conds.XListType)
	}
	ltt := conds.Items.Schema.Properties["lastTransitionTime"]
	if ltt.Type != "string" || ltt.Format != "date-time" || !strings.HasPrefix(ltt.Description, "lastTransitionTime is") {
		t.Errorf("lastTransitionTime is %+v", ltt)
	}
	if len(status.Properties["phase"].Enum) != 4 {
		t.Errorf("phase has the enum %v", status.Properties["phase"].Enum)
	}
	sel := ws.Properties["spec"].Properties["location"].Properties["selector"]
	if sel.XMapType == nil || *sel.XMapType != "atomic" || sel.Properties["matchLabels"].AdditionalProperties.Schema.Type != "string" {
		t.Errorf("selector is %+v", sel)
	}
	if !strings.HasPrefix(sel.Description, "selector selects the shards") {
		t.Errorf("the selector's description is %q, want the field's", sel.Description)
	}

	_, wt := coreSchema(t, "workspacetypes")
	vws := wt.Properties["status"].Properties["virtualWorkspaces"]
	if vws.XListType == nil || *vws.XListType != "map" || !reflect.DeepEqual(vws.XListMapKeys, []string{"url"}) {
		t.Errorf("virtualWorkspaces are %+v", vws)
	}
}

// TestOtherModels converts models beyond Core that use RawExtension,
// IntOrString, Quantity and nested ObjectMeta.
func TestOtherModels(t *testing.T) {
	for _, model := range []string{
		apisv1alpha1.APIResourceSchema{}.OpenAPIModelName(),
		apisv1alpha1.APIExport{}.OpenAPIModelName(),
		apisv1alpha1.APIBinding{}.OpenAPIModelName(),
		corev1alpha1.LogicalCluster{}.OpenAPIModelName(),
		corev1.Pod{}.OpenAPIModelName(),
		corev1.Service{}.OpenAPIModelName(),
	} {
		t.Run(model, func(t *testing.T) {
			props, err := JSONSchemaProps(model)
			if err != nil {
				t.Fatal(err)
			}
			structural(t, props)
		})
	}

	props, err := JSONSchemaProps(apisv1alpha1.APIResourceSchema{}.OpenAPIModelName())
	if err != nil {
		t.Fatal(err)
	}
	raw := props.Properties["spec"].Properties["versions"].Items.Schema.Properties["schema"]
	if raw.Type != "object" || raw.XPreserveUnknownFields == nil || !*raw.XPreserveUnknownFields {
		t.Errorf("a RawExtension is %+v, want an object that preserves unknown fields", raw)
	}

	props, err = JSONSchemaProps(corev1.Service{}.OpenAPIModelName())
	if err != nil {
		t.Fatal(err)
	}
	port := props.Properties["spec"].Properties["ports"].Items.Schema.Properties["targetPort"]
	if !port.XIntOrString || port.Type != "" {
		t.Errorf("an IntOrString is %+v", port)
	}
}

func TestRecursion(t *testing.T) {
	// JSONSchemaProps refers to itself (and has typeless parts).
	if _, err := JSONSchemaProps(apiextensionsv1.CustomResourceDefinition{}.OpenAPIModelName()); err == nil {
		t.Error("the CustomResourceDefinition model converts")
	}

	defs := map[string]common.OpenAPIDefinition{
		"a": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
			"b": {SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("b")}},
		}}}},
		"b": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
			"children": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("a")}}}}},
		}}}},
	}
	_, err := convert(defs, "a")
	if err == nil || !strings.Contains(err.Error(), "a -> b -> a") || !strings.Contains(err.Error(), ".b.children[]") {
		t.Errorf("a model that refers to itself through another: %v", err)
	}

	if _, err := JSONSchemaProps("io.example.v1.Missing"); err == nil {
		t.Error("a missing model converts")
	}
}
