package discovery

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi3"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

var (
	widgetsV1  = schema.GroupVersion{Group: "example.com", Version: "v1"}
	gizmosV1   = schema.GroupVersion{Group: "other.io", Version: "v1"}
	leasesV1   = schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	widgetName = "com.example.v1.Widget"
)

func TestOpenAPIV3PerCluster(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"))
	s.CRDs.set("b", newCRD("other.io", "Gizmo"))

	rootA := openapi3.NewRoot(discoveryClient(t, s, "a").OpenAPIV3())
	gvs, err := rootA.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	if !containsGV(gvs, widgetsV1) || containsGV(gvs, gizmosV1) || !containsGV(gvs, leasesV1) {
		t.Errorf("group versions of a = %v", gvs)
	}
	doc, err := rootA.GVSpec(widgetsV1)
	if err != nil {
		t.Fatalf("the CRD's document in a: %v", err)
	}
	widget := doc.Components.Schemas[widgetName]
	if widget == nil || widget.Properties["spec"].Properties["size"].Description != "Size is how large the object is." {
		t.Errorf("schema %s = %+v", widgetName, widget)
	}
	if _, ok := doc.Paths.Paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale"]; !ok {
		t.Errorf("the CRD's document lacks the scale subresource")
	}
	builtin, err := rootA.GVSpec(leasesV1)
	if err != nil || builtin.Components.Schemas["io.k8s.api.coordination.v1.Lease"] == nil {
		t.Errorf("the built-in document in a: %v", err)
	}

	rootB := openapi3.NewRoot(discoveryClient(t, s, "b").OpenAPIV3())
	if _, err := rootB.GVSpec(widgetsV1); err == nil {
		t.Errorf("b serves the OpenAPI of a's CRD")
	}
	if _, err := rootB.GVSpec(gizmosV1); err != nil {
		t.Errorf("b's own CRD: %v", err)
	}
}

func containsGV(gvs []schema.GroupVersion, gv schema.GroupVersion) bool {
	for _, g := range gvs {
		if g == gv {
			return true
		}
	}
	return false
}

// fetchOpenAPIV3Root fetches and decodes a root document.
func fetchOpenAPIV3Root(t *testing.T, url string) (handler3.OpenAPIV3Discovery, *http.Response) {
	t.Helper()
	resp, body := get(t, url, "application/json")
	var root handler3.OpenAPIV3Discovery
	if err := json.Unmarshal(body, &root); err != nil {
		t.Fatalf("decoding %s: %v: %s", url, err, body)
	}
	return root, resp
}

func TestOpenAPIV3Root(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"))

	builtin, _ := fetchOpenAPIV3Root(t, s.URL+"/openapi/v3")
	root, resp := fetchOpenAPIV3Root(t, s.URL+"/clusters/a/openapi/v3")
	for p, gv := range builtin.Paths {
		if root.Paths[p] != gv {
			t.Errorf("built-in path %s = %+v, want %+v", p, root.Paths[p], gv)
		}
	}
	crd, ok := root.Paths["apis/example.com/v1"]
	if !ok || len(root.Paths) != len(builtin.Paths)+1 {
		t.Fatalf("paths = %v", root.Paths)
	}
	u, err := url.Parse(crd.ServerRelativeURL)
	if err != nil || u.Path != "/openapi/v3/apis/example.com/v1" || u.Query().Get("hash") == "" {
		t.Fatalf("serverRelativeURL = %q, want /openapi/v3/apis/example.com/v1?hash=...", crd.ServerRelativeURL)
	}

	// The root has an ETag and answers If-None-Match like the built-in one.
	etag := resp.Header.Get("Etag")
	if etag == "" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("root headers = %v", resp.Header)
	}
	if resp, _ := get(t, s.URL+"/clusters/a/openapi/v3", "application/json", "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d, want 304", resp.StatusCode)
	}

	// The document at the listed URL, below the cluster prefix, is immutable
	// and its ETag is the hash.
	hash := u.Query().Get("hash")
	docURL := s.URL + "/clusters/a" + crd.ServerRelativeURL
	resp, body := get(t, docURL, "application/json")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Etag") != `"`+hash+`"` ||
		resp.Header.Get("Cache-Control") != "public, immutable" || resp.Header.Get("Expires") == "" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("document: status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if !strings.Contains(string(body), widgetName) {
		t.Errorf("document lacks %s", widgetName)
	}
	resp, body = get(t, docURL, "application/com.github.proto-openapi.spec.v3@v1.0+protobuf")
	var pb openapi_v3.Document
	if err := proto.Unmarshal(body, &pb); err != nil || resp.Header.Get("Content-Type") != "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" {
		t.Errorf("protobuf document: %v, Content-Type %q", err, resp.Header.Get("Content-Type"))
	}
	if resp, _ := get(t, docURL, "text/html"); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("text/html: status %d, want 406", resp.StatusCode)
	}

	// A schema change changes the hash in the root, a new version is listed.
	changed := newCRD("example.com", "Widget", resourceVersion("2"), withVersions(testVersion("v1", true, true), testVersion("v2", true, false)))
	changed.Spec.Versions[0].Schema.OpenAPIV3Schema.Description = "A changed object."
	s.CRDs.set("a", changed)
	root, _ = fetchOpenAPIV3Root(t, s.URL+"/clusters/a/openapi/v3")
	if root.Paths["apis/example.com/v1"] == crd || root.Paths["apis/example.com/v2"].ServerRelativeURL == "" {
		t.Errorf("after a CRD change, paths = %v", root.Paths)
	}
}

func TestOpenAPIV3RedirectsStayInTheCluster(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"))

	for _, p := range []string{"apis/example.com/v1", "apis/coordination.k8s.io/v1", "api/v1"} {
		t.Run(p, func(t *testing.T) {
			stale := s.URL + "/clusters/a/openapi/v3/" + p + "?hash=0123"
			resp, _ := get(t, stale, "application/json")
			if resp.StatusCode != http.StatusMovedPermanently {
				t.Fatalf("status %d, want 301", resp.StatusCode)
			}
			base, _ := url.Parse(stale)
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			target := base.ResolveReference(loc)
			if target.Path != "/clusters/a/openapi/v3/"+p || target.Query().Get("hash") == "0123" || target.Query().Get("hash") == "" {
				t.Errorf("redirect to %s, want /clusters/a/openapi/v3/%s?hash=<current>", target, p)
			}

			// A client following the redirect gets the document.
			resp, err = http.Get(stale)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/clusters/a/openapi/v3/"+p {
				t.Errorf("following: status %d at %s", resp.StatusCode, resp.Request.URL)
			}
		})
	}
}

func TestOpenAPIV2PerCluster(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"))
	s.CRDs.set("b", newCRD("other.io", "Gizmo"))

	definitions := func(cluster string) map[string]bool {
		// client-go asks for protobuf, as kubectl explain does.
		doc, err := discoveryClient(t, s, cluster).OpenAPISchema()
		if err != nil {
			t.Fatalf("OpenAPI v2 of %s: %v", cluster, err)
		}
		names := map[string]bool{}
		for _, d := range doc.GetDefinitions().GetAdditionalProperties() {
			names[d.GetName()] = true
		}
		return names
	}
	for cluster, want := range map[string]map[string]bool{
		"a": {widgetName: true, "io.other.v1.Gizmo": false, "io.k8s.api.core.v1.ConfigMap": true},
		"b": {widgetName: false, "io.other.v1.Gizmo": true, "io.k8s.api.core.v1.ConfigMap": true},
		"c": {widgetName: false, "io.other.v1.Gizmo": false, "io.k8s.api.core.v1.ConfigMap": true},
	} {
		got := definitions(cluster)
		for name, present := range want {
			if got[name] != present {
				t.Errorf("cluster %s: definition %s present = %v, want %v", cluster, name, got[name], present)
			}
		}
	}

	resp, body := get(t, s.URL+"/clusters/a/openapi/v2", "application/json")
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil {
		t.Fatal(err)
	}
	if _, ok := sw.Paths.Paths["/apis/example.com/v1/namespaces/{namespace}/widgets"]; !ok {
		t.Errorf("JSON document lacks the CRD's paths")
	}
	if _, ok := sw.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"]; !ok {
		t.Errorf("JSON document lacks the built-in paths")
	}
	etag := resp.Header.Get("Etag")
	if resp, _ := get(t, s.URL+"/clusters/a/openapi/v2", "application/json", "If-None-Match", etag); etag == "" || resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match %q: status %d, want 304", etag, resp.StatusCode)
	}
	resp, body = get(t, s.URL+"/clusters/a/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	var pb openapi_v2.Document
	if err := proto.Unmarshal(body, &pb); err != nil || resp.Header.Get("Content-Type") != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Errorf("protobuf: %v, Content-Type %q", err, resp.Header.Get("Content-Type"))
	}
}
