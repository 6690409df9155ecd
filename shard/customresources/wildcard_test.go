package customresources

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

var gizmos = schema.GroupResource{Group: "example.com", Resource: "gizmos"}

// gizmoVersion is a served version of gizmos.example.com whose spec has the
// given string properties, each with its default if not empty.
func gizmoVersion(name string, storage bool, props map[string]string) apiextensionsv1.CustomResourceDefinitionVersion {
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for p, def := range props {
		prop := apiextensionsv1.JSONSchemaProps{Type: "string"}
		if def != "" {
			prop.Default = &apiextensionsv1.JSON{Raw: []byte(`"` + def + `"`)}
		}
		spec.Properties[p] = prop
	}
	return apiextensionsv1.CustomResourceDefinitionVersion{
		Name: name, Served: true, Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type:       "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
		}},
	}
}

// gizmoCRD returns an Established CRD gizmos.example.com of a logical
// cluster, created at the given time.
func gizmoCRD(cluster logicalcluster.Name, created time.Time, scope apiextensionsv1.ResourceScope, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"}
	var stored []string
	for _, v := range versions {
		if v.Storage {
			stored = append(stored, v.Name)
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "gizmos.example.com",
			UID:               types.UID("gizmos-" + string(cluster)),
			ResourceVersion:   "1",
			CreationTimestamp: metav1.NewTime(created),
			Annotations:       map[string]string{logicalcluster.AnnotationKey: string(cluster)},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:      "example.com",
			Names:      names,
			Scope:      scope,
			Versions:   versions,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			AcceptedNames:  names,
			StoredVersions: stored,
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
				{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
			},
		},
	}
}

func gizmo(apiVersion, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       "Gizmo",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       spec,
	}}
}

// TestWildcardAcrossSchemas serves gizmos.example.com in two clusters whose
// CRDs differ: x (the older CRD) has v1 only, with spec.foo defaulted to
// "d-foo"; y has v1 and v2, stores v2, and has spec.bar. A list or watch
// across all clusters must show every cluster's objects as stored, not
// pruned or defaulted by the other cluster's schema, at any version some
// CRD serves.
func TestWildcardAcrossSchemas(t *testing.T) {
	for name, decorator := range storages(t) {
		t.Run(name, func(t *testing.T) { testWildcardAcrossSchemas(t, decorator) })
	}
}

func testWildcardAcrossSchemas(t *testing.T, decorator func(t *testing.T, url string) generic.StorageDecorator) {
	url := startEtcd(t)
	s := newTestServer(t, &RESTOptionsGetter{Backend: backend(url), Decorator: decorator(t, url)})
	old := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s.crds.set("x", gizmoCRD("x", old, apiextensionsv1.NamespaceScoped,
		gizmoVersion("v1", true, map[string]string{"foo": "d-foo"})))
	s.crds.set("y", gizmoCRD("y", old.Add(time.Hour), apiextensionsv1.NamespaceScoped,
		gizmoVersion("v1", false, map[string]string{"bar": ""}),
		gizmoVersion("v2", true, map[string]string{"bar": ""})))
	ctx := t.Context()
	v1, v2 := gizmos.WithVersion("v1"), gizmos.WithVersion("v2")

	if _, err := s.client(t, "x").Resource(v1).Namespace("default").Create(ctx, gizmo("example.com/v1", "gx", map[string]any{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client(t, "y").Resource(v2).Namespace("default").Create(ctx, gizmo("example.com/v2", "gy", map[string]any{"bar": "b"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// check asserts what a wildcard reader must see of gizmo u.
	check := func(t *testing.T, u *unstructured.Unstructured, apiVersion string) {
		t.Helper()
		if u.GetAPIVersion() != apiVersion {
			t.Errorf("%s: apiVersion %s, want %s", u.GetName(), u.GetAPIVersion(), apiVersion)
		}
		cluster := u.GetAnnotations()[logicalcluster.AnnotationKey]
		foo, bar := nested(t, u, "spec", "foo"), nested(t, u, "spec", "bar")
		switch u.GetName() {
		case "gx", "gx2":
			if cluster != "x" || foo != "d-foo" || bar != nil {
				t.Errorf("%s: cluster %q, spec %v; want x's object as stored: cluster x, spec.foo d-foo", u.GetName(), cluster, u.Object["spec"])
			}
		case "gy", "gy2":
			if cluster != "y" || foo != nil || bar != "b" {
				t.Errorf("%s: cluster %q, spec %v; want y's object as stored: cluster y, spec.bar b and no spec.foo", u.GetName(), cluster, u.Object["spec"])
			}
		default:
			t.Errorf("unexpected gizmo %s", u.GetName())
		}
	}

	var rv string
	for _, gvr := range []schema.GroupVersionResource{v1, v2} {
		t.Run("list at "+gvr.Version, func(t *testing.T) {
			list, err := s.client(t, "*").Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for i := range list.Items {
				names = append(names, list.Items[i].GetName())
				check(t, &list.Items[i], "example.com/"+gvr.Version)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"gx", "gy"}) {
				t.Errorf("wildcard list at %s has %v, want [gx gy]", gvr.Version, names)
			}
			rv = list.GetResourceVersion()
		})
	}

	for _, gvr := range []schema.GroupVersionResource{v1, v2} {
		t.Run("watch at "+gvr.Version, func(t *testing.T) {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			w, err := s.client(t, "*").Resource(gvr).Watch(wctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			x := s.client(t, "x").Resource(v1).Namespace("default")
			y := s.client(t, "y").Resource(v2).Namespace("default")
			if _, err := x.Create(ctx, gizmo("example.com/v1", "gx2", map[string]any{}), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := y.Create(ctx, gizmo("example.com/v2", "gy2", map[string]any{"bar": "b"}), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for len(seen) < 2 {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatal("watch closed")
					}
					u, isU := ev.Object.(*unstructured.Unstructured)
					if ev.Type != watch.Added || !isU {
						t.Fatalf("event %s %v, want ADDED gizmos", ev.Type, ev.Object)
					}
					check(t, u, "example.com/"+gvr.Version)
					seen[u.GetName()] = true
				case <-wctx.Done():
					t.Fatalf("watch saw only %v", seen)
				}
			}
			if err := x.Delete(ctx, "gx2", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := y.Delete(ctx, "gy2", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("metadata as JSON", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.server.URL+"/clusters/*/apis/example.com/v1/gizmos", nil)
		req.Header.Set("Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
		var list metav1.PartialObjectMetadataList
		if code := doJSON(t, req, &list); code != http.StatusOK || list.Kind != "PartialObjectMetadataList" {
			t.Fatalf("status %d, kind %q, want 200 PartialObjectMetadataList", code, list.Kind)
		}
		clusters := map[string]string{}
		for _, item := range list.Items {
			clusters[item.Name] = item.Annotations[logicalcluster.AnnotationKey]
		}
		if clusters["gx"] != "x" || clusters["gy"] != "y" {
			t.Errorf("metadata list: clusters by name %v, want gx in x and gy in y", clusters)
		}

		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		req, _ = http.NewRequestWithContext(wctx, http.MethodGet, s.server.URL+"/clusters/*/apis/example.com/v1/gizmos?watch=true&resourceVersion="+rv, nil)
		req.Header.Set("Accept", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("metadata watch: status %d", resp.StatusCode)
		}
		var ev struct {
			Type   string                       `json:"type"`
			Object metav1.PartialObjectMetadata `json:"object"`
		}
		line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if ev.Object.Kind != "PartialObjectMetadata" || ev.Object.Annotations[logicalcluster.AnnotationKey] == "" {
			t.Errorf("metadata watch event %s, want a PartialObjectMetadata with its cluster", line)
		}
	})

	t.Run("metadata client", func(t *testing.T) {
		// What the garbage collector's metadata informers use: protobuf
		// first, then JSON.
		mc, err := metadata.NewForConfig(&rest.Config{Host: s.server.URL + "/clusters/*"})
		if err != nil {
			t.Fatal(err)
		}
		for _, gvr := range []schema.GroupVersionResource{v1, v2} {
			list, err := mc.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("metadata list at %s: %v", gvr.Version, err)
			}
			if len(list.Items) != 2 {
				t.Errorf("metadata list at %s has %d items, want 2", gvr.Version, len(list.Items))
			}
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			w, err := mc.Resource(gvr).Watch(wctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				cancel()
				t.Fatalf("metadata watch at %s: %v", gvr.Version, err)
			}
			select {
			case ev := <-w.ResultChan():
				m, ok := ev.Object.(*metav1.PartialObjectMetadata)
				if !ok || m.Annotations[logicalcluster.AnnotationKey] == "" {
					t.Errorf("metadata watch at %s: event %s %#v, want PartialObjectMetadata with its cluster", gvr.Version, ev.Type, ev.Object)
				}
			case <-wctx.Done():
				t.Errorf("metadata watch at %s: no event", gvr.Version)
			}
			w.Stop()
			cancel()
		}
	})

	t.Run("a version no CRD serves", func(t *testing.T) {
		_, err := s.client(t, "*").Resource(gizmos.WithVersion("v3")).List(ctx, metav1.ListOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("wildcard list at v3: err = %v, want NotFound", err)
		}
	})

	t.Run("the state follows the CRDs of the name", func(t *testing.T) {
		all := s.client(t, "*").Resource(v1)
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		w, err := all.Watch(wctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		drain := func() (closed bool) {
			for {
				select {
				case _, ok := <-w.ResultChan():
					if !ok {
						return true
					}
				case <-time.After(500 * time.Millisecond):
					return false
				}
			}
		}
		// A change of x's CRD that changes nothing the wildcard state is
		// made of keeps the watch.
		s.crds.update("x", "gizmos.example.com", func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["baz"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		})
		s.handler.Invalidate("x", "gizmos.example.com")
		if drain() {
			t.Fatal("a schema change in one cluster ended the wildcard watch")
		}
		// A new version does: the state is rebuilt with it.
		s.crds.set("z", gizmoCRD("z", old.Add(2*time.Hour), apiextensionsv1.NamespaceScoped,
			gizmoVersion("v3", true, map[string]string{})))
		s.handler.Invalidate("z", "gizmos.example.com")
		if !drain() {
			t.Fatal("the wildcard watch outlived a change of the versions served")
		}
		if _, err := s.client(t, "*").Resource(gizmos.WithVersion("v3")).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("wildcard list at v3 once z serves it: %v", err)
		}
	})
}

func TestWildcardCRD(t *testing.T) {
	old := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ns, cs := apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped
	v := func(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return gizmoVersion(name, storage, map[string]string{"foo": "d"})
	}
	notEstablished := gizmoCRD("n", old, cs, v("v9", true))
	notEstablished.Status.Conditions = notEstablished.Status.Conditions[:1]
	unserved := v("v0", false)
	unserved.Served = false
	withUnserved := gizmoCRD("u", old, ns, v("v1", true), unserved)
	withUnserved.Status.StoredVersions = []string{"v1", "v1alpha1"}

	for _, tc := range []struct {
		name      string
		crds      []*apiextensionsv1.CustomResourceDefinition
		wantNil   bool
		scope     apiextensionsv1.ResourceScope
		served    []string
		notServed []string
	}{
		{name: "none", wantNil: true},
		{name: "only not Established", crds: []*apiextensionsv1.CustomResourceDefinition{notEstablished}, wantNil: true},
		{
			name:   "union of served versions",
			crds:   []*apiextensionsv1.CustomResourceDefinition{gizmoCRD("x", old, ns, v("v1", true)), gizmoCRD("y", old, ns, v("v1", false), v("v2", true))},
			scope:  ns,
			served: []string{"v2", "v1"},
		},
		{
			name:      "unserved and stored versions convert but are not served; CRDs not Established do not count",
			crds:      []*apiextensionsv1.CustomResourceDefinition{withUnserved, notEstablished},
			scope:     ns,
			served:    []string{"v1"},
			notServed: []string{"v0", "v1alpha1"},
		},
		{
			name:   "scope of the majority",
			crds:   []*apiextensionsv1.CustomResourceDefinition{gizmoCRD("x", old, ns, v("v1", true)), gizmoCRD("y", old, cs, v("v1", true)), gizmoCRD("z", old, cs, v("v1", true))},
			scope:  cs,
			served: []string{"v1"},
		},
		{
			name:   "a tie is namespaced",
			crds:   []*apiextensionsv1.CustomResourceDefinition{gizmoCRD("x", old, cs, v("v1", true)), gizmoCRD("y", old, ns, v("v1", true))},
			scope:  ns,
			served: []string{"v1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := wildcardCRD("gizmos.example.com", tc.crds)
			if tc.wantNil {
				if got != nil {
					t.Fatalf("got %v, want none", got.Spec)
				}
				return
			}
			if got == nil {
				t.Fatal("got none")
			}
			if got.Spec.Scope != tc.scope {
				t.Errorf("scope %s, want %s", got.Spec.Scope, tc.scope)
			}
			var served, notServed []string
			storage := 0
			for _, v := range got.Spec.Versions {
				if v.Served {
					served = append(served, v.Name)
				} else {
					notServed = append(notServed, v.Name)
				}
				if v.Storage {
					storage++
				}
				s := v.Schema.OpenAPIV3Schema
				if s.Type != "object" || s.XPreserveUnknownFields == nil || !*s.XPreserveUnknownFields || len(s.Properties) > 0 {
					t.Errorf("version %s has schema %+v, want an object that preserves unknown fields", v.Name, s)
				}
				if len(v.AdditionalPrinterColumns) > 0 || v.Subresources != nil {
					t.Errorf("version %s has printer columns or subresources", v.Name)
				}
			}
			if !slices.Equal(served, tc.served) || !slices.Equal(notServed, tc.notServed) {
				t.Errorf("served %v, not served %v; want %v and %v", served, notServed, tc.served, tc.notServed)
			}
			if storage != 1 {
				t.Errorf("%d storage versions, want 1", storage)
			}
			if got.Spec.Conversion == nil || got.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
				t.Errorf("conversion %v, want None", got.Spec.Conversion)
			}
			if !strings.HasPrefix(wildcardVersion(got).digest, "example.com|gizmos|") {
				t.Errorf("digest %q", wildcardVersion(got).digest)
			}
		})
	}
}
