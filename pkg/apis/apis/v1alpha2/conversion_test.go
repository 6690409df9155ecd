package v1alpha2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

func TestAPIExportConversion(t *testing.T) {
	tests := []struct {
		name string
		v1   *apisv1alpha1.APIExport
		v2   *APIExport
	}{{
		name: "schemas become resources stored as CRDs",
		v1: &apisv1alpha1.APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "cowboys"},
			Spec: apisv1alpha1.APIExportSpec{
				LatestResourceSchemas: []string{"v1.cowboys.wildwest.dev", "today.configmaps.core"},
			},
		},
		v2: &APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "cowboys"},
			Spec: APIExportSpec{Resources: []ResourceSchema{
				{Name: "cowboys", Group: "wildwest.dev", Schema: "v1.cowboys.wildwest.dev", Storage: ResourceSchemaStorage{CRD: &ResourceSchemaStorageCRD{}}},
				{Name: "configmaps", Group: "", Schema: "today.configmaps.core", Storage: ResourceSchemaStorage{CRD: &ResourceSchemaStorageCRD{}}},
			}},
		},
	}, {
		name: "claim verbs other than * are kept in an annotation",
		v1: &apisv1alpha1.APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "e", Annotations: map[string]string{
				PermissionClaimsAnnotation: `[{"resource":"configmaps","verbs":["get","list"]}]`,
			}},
			Spec: apisv1alpha1.APIExportSpec{PermissionClaims: []apisv1alpha1.PermissionClaim{
				{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true},
				{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, All: true},
			}},
		},
		v2: &APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "e"},
			Spec: APIExportSpec{PermissionClaims: []PermissionClaim{
				{Resource: "configmaps", Verbs: []string{"get", "list"}},
				{Resource: "secrets", Verbs: []string{"*"}},
			}},
		},
	}, {
		name: "a v1alpha1 resourceSelector is kept in an annotation of v1alpha2",
		v1: &apisv1alpha1.APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "e"},
			Spec: apisv1alpha1.APIExportSpec{PermissionClaims: []apisv1alpha1.PermissionClaim{
				{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, ResourceSelector: []apisv1alpha1.ResourceSelector{{Namespace: "ns"}}},
			}},
		},
		v2: &APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "e", Annotations: map[string]string{
				PermissionClaimsV1Alpha1Annotation: `[{"resource":"secrets","resourceSelector":[{"namespace":"ns"}]}]`,
			}},
			Spec: APIExportSpec{PermissionClaims: []PermissionClaim{
				{Resource: "secrets", Verbs: []string{"*"}},
			}},
		},
	}, {
		name: "resources latestResourceSchemas cannot hold are kept in an annotation",
		v1: &apisv1alpha1.APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "e", Annotations: map[string]string{
				ResourceSchemasAnnotation: `[{"name":"sheriffs","group":"wildwest.dev","schema":"v1.cowboys.wildwest.dev","storage":{"crd":{}}}]`,
			}},
		},
		v2: &APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: "e"},
			Spec: APIExportSpec{Resources: []ResourceSchema{
				{Name: "sheriffs", Group: "wildwest.dev", Schema: "v1.cowboys.wildwest.dev", Storage: ResourceSchemaStorage{CRD: &ResourceSchemaStorageCRD{}}},
			}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v2 APIExport
			if err := ConvertAPIExportFromV1alpha1(tt.v1, &v2); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.v2, &v2); d != "" {
				t.Errorf("v1alpha1 -> v1alpha2 (-want +got):\n%s", d)
			}
			var v1 apisv1alpha1.APIExport
			if err := ConvertAPIExportToV1alpha1(tt.v2, &v1); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.v1, &v1); d != "" {
				t.Errorf("v1alpha2 -> v1alpha1 (-want +got):\n%s", d)
			}
		})
	}
}

func TestAPIBindingConversion(t *testing.T) {
	tests := []struct {
		name string
		v1   *apisv1alpha1.APIBinding
		v2   *APIBinding
	}{{
		name: "answers of all verbs and objects need no annotation",
		v1: &apisv1alpha1.APIBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: apisv1alpha1.APIBindingSpec{
				Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: "root:org", Name: "e"}},
				PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{{
					PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, All: true},
					State:           apisv1alpha1.ClaimAccepted,
				}},
			},
		},
		v2: &APIBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: APIBindingSpec{
				Reference: BindingReference{Export: &ExportBindingReference{Path: "root:org", Name: "e"}},
				PermissionClaims: []AcceptablePermissionClaim{{
					ScopedPermissionClaim: ScopedPermissionClaim{
						PermissionClaim: PermissionClaim{Resource: "secrets", Verbs: []string{"*"}},
						Selector:        PermissionClaimSelector{MatchAll: true},
					},
					State: ClaimAccepted,
				}},
			},
		},
	}, {
		name: "narrowed verbs are kept in an annotation",
		v1: &apisv1alpha1.APIBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "b", Annotations: map[string]string{
				AcceptablePermissionClaimsAnnotation: `[{"resource":"configmaps","verbs":["get","list"],"selector":{"matchAll":true},"state":"Accepted"}]`,
			}},
			Spec: apisv1alpha1.APIBindingSpec{
				Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Name: "e"}},
				PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{{
					PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true},
					State:           apisv1alpha1.ClaimAccepted,
				}},
			},
		},
		v2: &APIBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: APIBindingSpec{
				Reference: BindingReference{Export: &ExportBindingReference{Name: "e"}},
				PermissionClaims: []AcceptablePermissionClaim{{
					ScopedPermissionClaim: ScopedPermissionClaim{
						PermissionClaim: PermissionClaim{Resource: "configmaps", Verbs: []string{"get", "list"}},
						Selector:        PermissionClaimSelector{MatchAll: true},
					},
					State: ClaimAccepted,
				}},
			},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v2 APIBinding
			if err := ConvertAPIBindingFromV1alpha1(tt.v1, &v2); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.v2, &v2); d != "" {
				t.Errorf("v1alpha1 -> v1alpha2 (-want +got):\n%s", d)
			}
			var v1 apisv1alpha1.APIBinding
			if err := ConvertAPIBindingToV1alpha1(tt.v2, &v1); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.v1, &v1); d != "" {
				t.Errorf("v1alpha2 -> v1alpha1 (-want +got):\n%s", d)
			}
		})
	}
}

// groupResource is a resource of an API group.
type groupResource struct{ Group, Resource string }

// gen makes random objects of both versions, in the forms that can be
// stored: v1alpha1 claims of all objects or with selectors, v1alpha2 claims
// with non-empty verbs and selectors.
type gen struct{ r *rand.Rand }

func (g gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g gen) n(max int) int { return g.r.IntN(max + 1) }

func (g gen) groupResources(n int) []groupResource {
	all := []groupResource{{Resource: "configmaps"}, {Resource: "secrets"}, {Group: "rbac.authorization.k8s.io", Resource: "roles"}, {Group: "wildwest.dev", Resource: "cowboys"}, {Resource: "namespaces"}}
	g.r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:n]
}

func (g gen) identity(gr groupResource) string {
	if gr.Group == "wildwest.dev" {
		return "8f6b4f1b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f"
	}
	return ""
}

func (g gen) verbs() []string {
	if g.r.IntN(2) == 0 {
		return []string{"*"}
	}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	g.r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:1+g.n(len(all)-1)]
}

func (g gen) selector() PermissionClaimSelector {
	switch g.r.IntN(3) {
	case 0:
		return PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick("a", "b")}}}
	case 1:
		return PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"x"}}}}}
	}
	return PermissionClaimSelector{MatchAll: true}
}

func (g gen) v1Claim(gr groupResource) apisv1alpha1.PermissionClaim {
	c := apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Group: gr.Group, Resource: gr.Resource}, IdentityHash: g.identity(gr)}
	if g.r.IntN(2) == 0 {
		c.All = true
	} else {
		c.ResourceSelector = []apisv1alpha1.ResourceSelector{{Namespace: g.pick("", "ns")}, {Name: g.pick("x", "y")}}[:1+g.n(1)]
	}
	return c
}

func (g gen) v2Claim(gr groupResource) PermissionClaim {
	return PermissionClaim{Group: gr.Group, Resource: gr.Resource, Verbs: g.verbs(), IdentityHash: g.identity(gr)}
}

func (g gen) meta() metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.pick("a", "b"), ResourceVersion: g.pick("", "42")}
	if g.r.IntN(2) == 0 {
		m.Annotations = map[string]string{"team": g.pick("x", "y")}
	}
	return m
}

func (g gen) conditions() conditionsv1alpha1.Conditions {
	if g.r.IntN(2) == 0 {
		return nil
	}
	return conditionsv1alpha1.Conditions{{Type: "Ready", Status: "True"}}
}

func (g gen) v1Export() *apisv1alpha1.APIExport {
	e := &apisv1alpha1.APIExport{ObjectMeta: g.meta()}
	for range g.n(2) {
		e.Spec.LatestResourceSchemas = append(e.Spec.LatestResourceSchemas, g.pick("v1", "v2")+"."+g.pick("cowboys", "sheriffs")+"."+g.pick("wildwest.dev", "core"))
	}
	for _, gr := range g.groupResources(g.n(3)) {
		e.Spec.PermissionClaims = append(e.Spec.PermissionClaims, g.v1Claim(gr))
	}
	if g.r.IntN(2) == 0 {
		e.Spec.MaximalPermissionPolicy = &apisv1alpha1.MaximalPermissionPolicy{Local: &apisv1alpha1.LocalAPIExportPolicy{}}
	}
	e.Status = apisv1alpha1.APIExportStatus{IdentityHash: g.pick("", "abc"), Conditions: g.conditions()}
	return e
}

func (g gen) v2Export() *APIExport {
	e := &APIExport{ObjectMeta: g.meta()}
	for _, gr := range g.groupResources(g.n(2)) {
		r := ResourceSchema{Name: gr.Resource, Group: gr.Group, Schema: "v1." + gr.Resource + "." + gr.Group, Storage: ResourceSchemaStorage{CRD: &ResourceSchemaStorageCRD{}}}
		if gr.Group == "" {
			r.Schema += "core"
		}
		switch g.r.IntN(4) {
		case 0:
			r.Storage = ResourceSchemaStorage{Virtual: &ResourceSchemaStorageVirtual{IdentityHash: "h"}}
		case 1:
			r.Name = "other"
		}
		e.Spec.Resources = append(e.Spec.Resources, r)
	}
	// Resources latestResourceSchemas cannot hold come back after the
	// others (as in kcp); admission refuses them anyway.
	slices.SortStableFunc(e.Spec.Resources, func(a, b ResourceSchema) int {
		return cmpBool(!latestSchemaOf(a), !latestSchemaOf(b))
	})
	for _, gr := range g.groupResources(g.n(3)) {
		e.Spec.PermissionClaims = append(e.Spec.PermissionClaims, g.v2Claim(gr))
	}
	e.Status = APIExportStatus{IdentityHash: g.pick("", "abc"), Conditions: g.conditions()}
	return e
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func (g gen) v1Binding() *apisv1alpha1.APIBinding {
	b := &apisv1alpha1.APIBinding{ObjectMeta: g.meta()}
	b.Spec.Reference.Export = &apisv1alpha1.ExportBindingReference{Path: g.pick("", "root:org"), Name: "e"}
	for _, gr := range g.groupResources(g.n(3)) {
		b.Spec.PermissionClaims = append(b.Spec.PermissionClaims, apisv1alpha1.AcceptablePermissionClaim{
			PermissionClaim: g.v1Claim(gr), State: apisv1alpha1.AcceptablePermissionClaimState(g.pick("Accepted", "Rejected")),
		})
	}
	for _, gr := range g.groupResources(g.n(3)) {
		b.Status.ExportPermissionClaims = append(b.Status.ExportPermissionClaims, g.v1Claim(gr))
	}
	for _, gr := range g.groupResources(g.n(3)) {
		b.Status.AppliedPermissionClaims = append(b.Status.AppliedPermissionClaims, g.v1Claim(gr))
	}
	if g.r.IntN(2) == 0 {
		b.Status.Phase = apisv1alpha1.APIBindingPhaseBound
		b.Status.BoundResources = []apisv1alpha1.BoundAPIResource{{Group: "wildwest.dev", Resource: "cowboys",
			Schema: apisv1alpha1.BoundAPIResourceSchema{Name: "v1.cowboys.wildwest.dev", UID: "u", IdentityHash: "h"}, StorageVersions: []string{"v1"}}}
	}
	b.Status.Conditions = g.conditions()
	return b
}

func (g gen) v2Binding() *APIBinding {
	b := &APIBinding{ObjectMeta: g.meta()}
	b.Spec.Reference.Export = &ExportBindingReference{Path: g.pick("", "root:org"), Name: "e"}
	scoped := func(gr groupResource) ScopedPermissionClaim {
		return ScopedPermissionClaim{PermissionClaim: g.v2Claim(gr), Selector: g.selector()}
	}
	for _, gr := range g.groupResources(g.n(3)) {
		b.Spec.PermissionClaims = append(b.Spec.PermissionClaims, AcceptablePermissionClaim{
			ScopedPermissionClaim: scoped(gr), State: AcceptablePermissionClaimState(g.pick("Accepted", "Rejected")),
		})
	}
	for _, gr := range g.groupResources(g.n(3)) {
		b.Status.ExportPermissionClaims = append(b.Status.ExportPermissionClaims, g.v2Claim(gr))
	}
	for _, gr := range g.groupResources(g.n(3)) {
		b.Status.AppliedPermissionClaims = append(b.Status.AppliedPermissionClaims, scoped(gr))
	}
	b.Status.Phase = APIBindingPhaseType(g.pick("", "Binding", "Bound"))
	b.Status.Conditions = g.conditions()
	return b
}

// TestRoundTrips converts random objects to the other version and back,
// and, for v1alpha1 objects that carry what a v1alpha2 write stored, the
// other way round too: nothing may be lost, and nothing may be added.
func TestRoundTrips(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	for i := range 500 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			v1e := g.v1Export()
			roundTrip(t, v1e, ConvertAPIExportFromV1alpha1, ConvertAPIExportToV1alpha1)
			v2e := g.v2Export()
			stored := roundTrip(t, v2e, ConvertAPIExportToV1alpha1, ConvertAPIExportFromV1alpha1)
			roundTrip(t, stored, ConvertAPIExportFromV1alpha1, ConvertAPIExportToV1alpha1)

			v1b := g.v1Binding()
			roundTrip(t, v1b, ConvertAPIBindingFromV1alpha1, ConvertAPIBindingToV1alpha1)
			v2b := g.v2Binding()
			storedB := roundTrip(t, v2b, ConvertAPIBindingToV1alpha1, ConvertAPIBindingFromV1alpha1)
			roundTrip(t, storedB, ConvertAPIBindingFromV1alpha1, ConvertAPIBindingToV1alpha1)
		})
	}
}

// roundTrip converts in with there and back again, fails when the result
// differs from in, and returns the intermediate object.
func roundTrip[A, B any](t *testing.T, in *A, there func(*A, *B) error, back func(*B, *A) error) *B {
	t.Helper()
	before, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var mid B
	if err := there(in, &mid); err != nil {
		t.Fatalf("converting %T: %v", in, err)
	}
	after, _ := json.Marshal(in)
	if !bytes.Equal(before, after) {
		t.Fatalf("converting %T changed its input", in)
	}
	var out A
	if err := back(&mid, &out); err != nil {
		t.Fatalf("converting %T back: %v", mid, err)
	}
	if d := cmp.Diff(in, &out); d != "" {
		t.Fatalf("%T round trip through %T (-in +out):\n%s\nintermediate: %+v", in, mid, d, mid)
	}
	return &mid
}

// The samples are written as kcp serves apis.kcp.io/v1alpha2 objects: every
// field of kcp's types that a shard serves, with kcp's JSON names.
const (
	kcpAPIExportJSON = `{
  "apiVersion": "apis.kcp.io/v1alpha2",
  "kind": "APIExport",
  "metadata": {"name": "wildwest.dev", "annotations": {"owner": "team-a"}},
  "spec": {
    "resources": [
      {"name": "cowboys", "group": "wildwest.dev", "schema": "v250101-abc.cowboys.wildwest.dev", "storage": {"crd": {}}}
    ],
    "identity": {"secretRef": {"namespace": "kcp-system", "name": "wildwest-identity"}},
    "maximalPermissionPolicy": {"local": {}},
    "permissionClaims": [
      {"group": "", "resource": "configmaps", "verbs": ["get", "list"]},
      {"group": "wildwest.dev", "resource": "sheriffs", "identityHash": "8f6b4f1b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f", "verbs": ["*"]}
    ]
  },
  "status": {
    "identityHash": "1f6b4f1b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f",
    "conditions": [{"type": "IdentityValid", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}],
    "virtualWorkspaces": [{"url": "https://shard.example:6443/services/apiexport/root:org/wildwest.dev"}]
  }
}`
	kcpAPIBindingJSON = `{
  "apiVersion": "apis.kcp.io/v1alpha2",
  "kind": "APIBinding",
  "metadata": {"name": "wildwest"},
  "spec": {
    "reference": {"export": {"path": "root:org", "name": "wildwest.dev"}},
    "permissionClaims": [
      {"group": "", "resource": "configmaps", "verbs": ["get", "list"], "selector": {"matchAll": true}, "state": "Accepted"},
      {"resource": "secrets", "verbs": ["*"], "selector": {"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}, "state": "Rejected"}
    ]
  },
  "status": {
    "apiExportClusterName": "2x7ab3ku9zf1",
    "boundResources": [
      {"group": "wildwest.dev", "resource": "cowboys", "schema": {"name": "v250101-abc.cowboys.wildwest.dev", "UID": "0b5c3a0e-1111-2222-3333-444455556666", "identityHash": "1f6b4f1b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f"}, "storageVersions": ["v1"]}
    ],
    "phase": "Bound",
    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}],
    "appliedPermissionClaims": [{"group": "", "resource": "configmaps", "verbs": ["get", "list"], "selector": {"matchAll": true}}],
    "exportPermissionClaims": [{"group": "", "resource": "configmaps", "verbs": ["get", "list"]}]
  }
}`
)

// TestKCPWireFormat decodes kcp's JSON strictly (an unknown field fails)
// and encodes it again: every field must come back under its name, with
// its value. Through v1alpha1 and back, the object must also stay the same.
func TestKCPWireFormat(t *testing.T) {
	for _, tt := range []struct {
		name    string
		json    string
		obj     runtime.Object
		stored  runtime.Object
		through func(in, mid runtime.Object) error
		back    func(mid, out runtime.Object) error
	}{
		{"APIExport", kcpAPIExportJSON, &APIExport{}, &apisv1alpha1.APIExport{},
			func(in, mid runtime.Object) error {
				return ConvertAPIExportToV1alpha1(in.(*APIExport), mid.(*apisv1alpha1.APIExport))
			},
			func(mid, out runtime.Object) error {
				return ConvertAPIExportFromV1alpha1(mid.(*apisv1alpha1.APIExport), out.(*APIExport))
			}},
		{"APIBinding", kcpAPIBindingJSON, &APIBinding{}, &apisv1alpha1.APIBinding{},
			func(in, mid runtime.Object) error {
				return ConvertAPIBindingToV1alpha1(in.(*APIBinding), mid.(*apisv1alpha1.APIBinding))
			},
			func(mid, out runtime.Object) error {
				return ConvertAPIBindingFromV1alpha1(mid.(*apisv1alpha1.APIBinding), out.(*APIBinding))
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dec := json.NewDecoder(bytes.NewReader([]byte(tt.json)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.obj); err != nil {
				t.Fatalf("decoding kcp's JSON: %v", err)
			}
			encoded, err := json.Marshal(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := json.Unmarshal([]byte(tt.json), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(encoded, &got); err != nil {
				t.Fatal(err)
			}
			// kcp writes the core group as "" where it is a required
			// field (resources[].group) and leaves it out where it is
			// optional (claims); so do we, except that an explicit "" of
			// an optional group is left out.
			dropEmptyGroups(want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("kcp's JSON -> %T -> JSON (-kcp +ours):\n%s", tt.obj, d)
			}

			if err := tt.through(tt.obj, tt.stored); err != nil {
				t.Fatal(err)
			}
			back := reflect.New(reflect.TypeOf(tt.obj).Elem()).Interface().(runtime.Object)
			if err := tt.back(tt.stored, back); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.obj, back); d != "" {
				t.Errorf("through v1alpha1 and back (-before +after):\n%s", d)
			}
		})
	}
}

// dropEmptyGroups removes "group": "" from claims, where the group is
// optional.
func dropEmptyGroups(v any) {
	switch v := v.(type) {
	case map[string]any:
		if g, ok := v["group"]; ok && g == "" {
			if _, isClaim := v["verbs"]; isClaim {
				delete(v, "group")
			}
		}
		for _, e := range v {
			dropEmptyGroups(e)
		}
	case []any:
		for _, e := range v {
			dropEmptyGroups(e)
		}
	}
}
