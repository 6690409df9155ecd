package customresources

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/client-go/dynamic"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// widget returns a Widget in namespace default.
func widget(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       spec,
	}}
}

func nested(t *testing.T, u *unstructured.Unstructured, fields ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(fields, "."), err)
	}
	return v
}

// TestCustomResources serves widgets.example.com in two logical clusters
// with different schemas through the cluster-aware storage of shard/storage
// on an embedded etcd, and checks what a client would notice.
func TestCustomResources(t *testing.T) {
	for name, decorator := range storages(t) {
		t.Run(name, func(t *testing.T) { testCustomResources(t, decorator) })
	}
}

func testCustomResources(t *testing.T, decorator func(t *testing.T, url string) generic.StorageDecorator) {
	url := startEtcd(t)
	s := newTestServer(t, &RESTOptionsGetter{Backend: backend(url), Decorator: decorator(t, url)})
	s.crds.set("a", widgetCRD("a", "integer"))
	s.crds.set("b", widgetCRD("b", "string"))
	a := s.client(t, "a").Resource(widgets).Namespace("default")
	b := s.client(t, "b").Resource(widgets).Namespace("default")
	ctx := t.Context()

	t.Run("each cluster validates by its own schema", func(t *testing.T) {
		if _, err := a.Create(ctx, widget("w1", map[string]any{"size": int64(3)}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("integer size in a: %v", err)
		}
		if _, err := a.Create(ctx, widget("bad", map[string]any{"size": "big"}), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("string size in a: err = %v, want Invalid", err)
		}
		if _, err := b.Create(ctx, widget("w2", map[string]any{"size": "big"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("string size in b: %v", err)
		}
		if _, err := b.Create(ctx, widget("bad", map[string]any{"size": int64(3)}), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("integer size in b: err = %v, want Invalid", err)
		}
	})

	t.Run("CEL rules", func(t *testing.T) {
		_, err := a.Create(ctx, widget("huge", map[string]any{"size": int64(1000)}), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "size must be at most 100") {
			t.Errorf("err = %v, want Invalid by the CEL rule", err)
		}
	})

	t.Run("defaulting and pruning on write", func(t *testing.T) {
		got, err := a.Create(ctx, widget("w3", map[string]any{"size": int64(1), "unknown": "x"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := nested(t, got, "spec", "color"); c != "blue" {
			t.Errorf("spec.color = %v, want the default blue", c)
		}
		if u := nested(t, got, "spec", "unknown"); u != nil {
			t.Errorf("spec.unknown = %v, want it pruned", u)
		}
		if cl := got.GetAnnotations()[logicalcluster.AnnotationKey]; cl != "a" {
			t.Errorf("%s = %q, want a", logicalcluster.AnnotationKey, cl)
		}
		// b has no default.
		got, err = b.Create(ctx, widget("w3", map[string]any{"size": "s"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := nested(t, got, "spec", "color"); c != nil {
			t.Errorf("spec.color in b = %v, want no default", c)
		}
		// Strict field validation refuses unknown fields instead.
		_, err = a.Create(ctx, widget("strict", map[string]any{"size": int64(1), "unknown": "x"}), metav1.CreateOptions{FieldValidation: "Strict"})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("strict create with an unknown field: err = %v, want BadRequest", err)
		}
	})

	t.Run("a widget in a is invisible in b", func(t *testing.T) {
		if _, err := b.Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get a's w1 in b: err = %v, want NotFound", err)
		}
		for cluster, c := range map[string]dynamic.ResourceInterface{"a": a, "b": b} {
			list, err := c.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, item := range list.Items {
				if got := item.GetAnnotations()[logicalcluster.AnnotationKey]; got != cluster {
					t.Errorf("list in %s returned %s from cluster %q", cluster, item.GetName(), got)
				}
			}
		}
		keys := etcdKeys(ctx, t, etcdClient(t, url), "/registry/example.com/widgets/customresources/")
		for _, want := range []string{
			"/registry/example.com/widgets/customresources/a/default/w1",
			"/registry/example.com/widgets/customresources/b/default/w2",
		} {
			if !slices.Contains(keys, want) {
				t.Errorf("etcd keys %v lack %s", keys, want)
			}
		}
	})

	t.Run("update, merge and JSON patch", func(t *testing.T) {
		w, err := a.Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(w.Object, int64(4), "spec", "size")
		if w, err = a.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := nested(t, w, "spec", "size"); got != int64(4) {
			t.Errorf("after update spec.size = %v, want 4", got)
		}
		if w, err = a.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"size":5}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := nested(t, w, "spec", "size"); got != int64(5) {
			t.Errorf("after merge patch spec.size = %v, want 5", got)
		}
		if w, err = a.Patch(ctx, "w1", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/size","value":6}]`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := nested(t, w, "spec", "size"); got != int64(6) {
			t.Errorf("after JSON patch spec.size = %v, want 6", got)
		}
		if _, err := a.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"size":"six"}}`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("patch against the schema: err = %v, want Invalid", err)
		}
		if _, err := a.Patch(ctx, "w1", types.StrategicMergePatchType, []byte(`{"spec":{"size":7}}`), metav1.PatchOptions{}); !apierrors.IsUnsupportedMediaType(err) {
			t.Errorf("strategic merge patch: err = %v, want UnsupportedMediaType", err)
		}
	})

	t.Run("server-side apply", func(t *testing.T) {
		got, err := a.Apply(ctx, "applied", widget("applied", map[string]any{"size": int64(7)}), metav1.ApplyOptions{FieldManager: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if c := nested(t, got, "spec", "color"); c != "blue" {
			t.Errorf("spec.color = %v, want the default blue", c)
		}
		managers := map[string]metav1.ManagedFieldsOperationType{}
		for _, m := range got.GetManagedFields() {
			managers[m.Manager] = m.Operation
		}
		if managers["alice"] != metav1.ManagedFieldsOperationApply {
			t.Errorf("managed fields %v, want alice with Apply", managers)
		}
		_, err = a.Apply(ctx, "applied", widget("applied", map[string]any{"size": int64(8)}), metav1.ApplyOptions{FieldManager: "bob"})
		if !apierrors.IsConflict(err) {
			t.Fatalf("apply of a field another manager owns: err = %v, want Conflict", err)
		}
		got, err = a.Apply(ctx, "applied", widget("applied", map[string]any{"size": int64(8)}), metav1.ApplyOptions{FieldManager: "bob", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if s := nested(t, got, "spec", "size"); s != int64(8) {
			t.Errorf("after forced apply spec.size = %v, want 8", s)
		}
		// The same apply in b follows b's schema. Like upstream, the field
		// manager refuses the type mismatch before validation does.
		if _, err := b.Apply(ctx, "applied", widget("applied", map[string]any{"size": int64(8)}), metav1.ApplyOptions{FieldManager: "alice"}); err == nil || !strings.Contains(err.Error(), ".spec.size: expected string") {
			t.Errorf("apply of an integer size in b: err = %v, want a type error by b's schema", err)
		}
		if _, err := b.Apply(ctx, "applied", widget("applied", map[string]any{"size": "xl"}), metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
			t.Errorf("apply of a string size in b: %v", err)
		}
	})

	t.Run("status subresource", func(t *testing.T) {
		w, err := a.Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(w.Object, "Ready", "status", "phase")
		_ = unstructured.SetNestedField(w.Object, int64(99), "spec", "size")
		got, err := a.UpdateStatus(ctx, w, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p := nested(t, got, "status", "phase"); p != "Ready" {
			t.Errorf("status.phase = %v, want Ready", p)
		}
		if s := nested(t, got, "spec", "size"); s != int64(6) {
			t.Errorf("a status update changed spec.size to %v", s)
		}
		_ = unstructured.SetNestedField(got.Object, "Hacked", "status", "phase")
		got, err = a.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p := nested(t, got, "status", "phase"); p != "Ready" {
			t.Errorf("a main resource update changed status.phase to %v", p)
		}
		if _, err := a.Patch(ctx, "w1", types.MergePatchType, []byte(`{"status":{"phase":7}}`), metav1.PatchOptions{}, "status"); !apierrors.IsInvalid(err) {
			t.Errorf("status patch against the schema: err = %v, want Invalid", err)
		}
	})

	t.Run("scale subresource", func(t *testing.T) {
		if _, err := a.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		scale, err := a.Get(ctx, "w1", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatal(err)
		}
		if scale.GetKind() != "Scale" || nested(t, scale, "spec", "replicas") != int64(3) {
			t.Errorf("scale = %v, want a Scale with spec.replicas 3", scale.Object)
		}
		if _, err := b.Get(ctx, "w2", metav1.GetOptions{}, "scale"); !apierrors.IsNotFound(err) {
			t.Errorf("scale in b, which has none: err = %v, want NotFound", err)
		}
	})

	t.Run("selectable fields", func(t *testing.T) {
		list, err := a.List(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			t.Error("no widget with spec.color=blue")
		}
		if _, err := b.List(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue"}); !apierrors.IsBadRequest(err) {
			t.Errorf("field selector b does not allow: err = %v, want BadRequest", err)
		}
	})

	t.Run("watch", func(t *testing.T) {
		list, err := a.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		w, err := a.Watch(wctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if _, err := b.Create(ctx, widget("watched-b", map[string]any{"size": "s"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Create(ctx, widget("watched-a", map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			u, _ := ev.Object.(*unstructured.Unstructured)
			if ev.Type != watch.Added || u == nil || u.GetName() != "watched-a" {
				t.Fatalf("first event %s %v, want ADDED watched-a (b's watched-b must not show up)", ev.Type, ev.Object)
			}
			if c := nested(t, u, "spec", "color"); c != "blue" {
				t.Errorf("watched object spec.color = %v, want the default", c)
			}
		case <-wctx.Done():
			t.Fatal("no watch event")
		}

		// Invalidating the CRD ends the watch.
		s.handler.Invalidate("a", "widgets.example.com")
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					return
				}
			case <-wctx.Done():
				t.Fatal("the watch outlived the invalidated serving state")
			}
		}
	})

	t.Run("defaulting and pruning on read", func(t *testing.T) {
		raw := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"raw","namespace":"default","uid":"9c6b2a43-1f9e-4d4c-8a54-4fc3d0c1f001","creationTimestamp":"2024-01-01T00:00:00Z","annotations":{"kcp.io/cluster":"a"}},"spec":{"size":2,"junk":true}}`
		if _, err := etcdClient(t, url).Put(ctx, "/registry/example.com/widgets/customresources/a/default/raw", raw); err != nil {
			t.Fatal(err)
		}
		got, err := a.Get(ctx, "raw", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := nested(t, got, "spec", "color"); c != "blue" {
			t.Errorf("spec.color = %v, want the default applied on read", c)
		}
		if j := nested(t, got, "spec", "junk"); j != nil {
			t.Errorf("spec.junk = %v, want it pruned on read", j)
		}
	})

	t.Run("a changed CRD is served with its new schema", func(t *testing.T) {
		s.crds.update("a", "widgets.example.com", func(crd *apiextensionsv1.CustomResourceDefinition) {
			spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			spec.Properties["shape"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"round"`)}}
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		})
		// No Invalidate: the new resourceVersion alone rebuilds the state.
		got, err := a.Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sh := nested(t, got, "spec", "shape"); sh != "round" {
			t.Errorf("spec.shape = %v, want the new default", sh)
		}
	})

	t.Run("versions without conversion", func(t *testing.T) {
		crd := widgetCRD("m", "integer")
		beta := *crd.Spec.Versions[0].DeepCopy()
		beta.Name, beta.Storage, beta.Deprecated = "v1beta1", false, true
		crd.Spec.Versions = append(crd.Spec.Versions, beta)
		s.crds.set("m", crd)
		m := s.client(t, "m").Resource(widgets).Namespace("default")
		if _, err := m.Create(ctx, widget("w", map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.server.URL+"/clusters/m/apis/example.com/v1beta1/namespaces/default/widgets/w", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got unstructured.Unstructured
		if err := json.NewDecoder(resp.Body).Decode(&got.Object); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || got.GetAPIVersion() != "example.com/v1beta1" || got.GetName() != "w" {
			t.Errorf("GET v1beta1: %d %v, want w in example.com/v1beta1", resp.StatusCode, got.Object)
		}
		if w := resp.Header.Get("Warning"); !strings.Contains(w, "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget") {
			t.Errorf("Warning header %q, want the deprecation warning", w)
		}
	})

	t.Run("table output from printer columns", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.server.URL+"/clusters/a/apis/example.com/v1/namespaces/default/widgets", nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		var table metav1.Table
		if code := doJSON(t, req, &table); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		var cols []string
		for _, c := range table.ColumnDefinitions {
			cols = append(cols, c.Name)
		}
		if !slices.Equal(cols, []string{"Name", "Size"}) {
			t.Errorf("columns %v, want [Name Size]", cols)
		}
		if len(table.Rows) == 0 {
			t.Error("no rows")
		}
	})

	t.Run("wildcard", func(t *testing.T) {
		all := s.client(t, "*").Resource(widgets)
		list, err := all.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		clusters := map[string]bool{}
		for _, item := range list.Items {
			clusters[item.GetAnnotations()[logicalcluster.AnnotationKey]] = true
		}
		if !clusters["a"] || !clusters["b"] {
			t.Errorf("wildcard list has objects of clusters %v, want a and b", clusters)
		}
		if _, err := all.Namespace("default").Create(ctx, widget("x", map[string]any{}), metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
			t.Errorf("wildcard create: err = %v, want BadRequest", err)
		}
		if _, err := all.Namespace("default").Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsBadRequest(err) {
			t.Errorf("wildcard get: err = %v, want BadRequest", err)
		}
	})

	t.Run("not found", func(t *testing.T) {
		for _, path := range []string{
			"/clusters/a/apis/example.com/v1/namespaces/default/gadgets",         // no such CRD
			"/clusters/c/apis/example.com/v1/namespaces/default/widgets",         // no CRD in c
			"/clusters/a/apis/example.com/v2/namespaces/default/widgets",         // version not served
			"/clusters/a/apis/example.com/v1/widgets/w1",                         // wrong scope
			"/clusters/a/apis/example.com/v1/namespaces/default/widgets/w1/logs", // no such subresource
		} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.server.URL+path, nil)
			var status metav1.Status
			if code := doJSON(t, req, &status); code != http.StatusNotFound || status.Kind != "Status" || status.Code != http.StatusNotFound {
				t.Errorf("GET %s: %d %+v, want a 404 Status", path, code, status)
			}
		}
		s.crds.set("c", func() *apiextensionsv1.CustomResourceDefinition {
			crd := widgetCRD("c", "string")
			crd.Status.Conditions = crd.Status.Conditions[:1]
			return crd
		}())
		if _, err := s.client(t, "c").Resource(widgets).Namespace("default").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("list of a CRD that is not Established: err = %v, want NotFound", err)
		}
	})

	t.Run("terminating CRD refuses creates", func(t *testing.T) {
		s.crds.update("b", "widgets.example.com", func(crd *apiextensionsv1.CustomResourceDefinition) {
			now := metav1.Now()
			crd.DeletionTimestamp = &now
		})
		if _, err := b.Create(ctx, widget("late", map[string]any{"size": "s"}), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("create: err = %v, want Forbidden", err)
		}
		if _, err := b.Get(ctx, "w2", metav1.GetOptions{}); err != nil {
			t.Errorf("get: %v", err)
		}
	})

	t.Run("delete and deletecollection", func(t *testing.T) {
		if err := a.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: err = %v, want NotFound", err)
		}
		if err := b.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := b.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("b has %d widgets after deletecollection", len(list.Items))
		}
		list, err = a.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			t.Error("deletecollection in b deleted a's widgets")
		}
	})
}

// doJSON sends req and decodes the JSON response into out.
func doJSON(t *testing.T, req *http.Request, out any) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("%s %s: %d %s: %v", req.Method, req.URL.Path, resp.StatusCode, body, err)
	}
	return resp.StatusCode
}
