package discovery

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestNewCRDAPIsCoreGroup(t *testing.T) {
	builtinCore := func(gv schema.GroupVersion, resource, kind string) bool {
		return gv.Group == "" && (resource == "configmaps" || kind == "ConfigMap")
	}
	apis := newCRDAPIs([]*apiextensionsv1.CustomResourceDefinition{
		newCRD("", "Widget"),
		newCRD("", "ConfigMap"),
		newCRD("", "Gadget", withVersions(testVersion("v2", true, true))),
		newCRD("example.com", "Gizmo"),
	}, builtinCore)
	if got := describe(apis); !reflect.DeepEqual(got, []string{"example.com/v1: gizmos gizmos/status gizmos/scale"}) {
		t.Errorf("named groups = %q, want only example.com: the core group is not a group", got)
	}
	if apis.core == nil {
		t.Fatal("no core v1 resources")
	}
	var names []string
	for _, r := range apis.core.resources {
		names = append(names, r.Name)
	}
	if want := []string{"widgets", "widgets/status", "widgets/scale"}; !reflect.DeepEqual(names, want) {
		t.Errorf("core v1 resources = %q, want %q (ConfigMap shadowed by the built-in, v2 not served)", names, want)
	}
	if apis.empty() || !newCRDAPIs([]*apiextensionsv1.CustomResourceDefinition{newCRD("", "ConfigMap")}, builtinCore).empty() {
		t.Errorf("empty() is wrong")
	}
}

// coreV1Names returns the resource names of a /api/v1 document.
func coreV1Names(t *testing.T, url string) (*http.Response, []string) {
	t.Helper()
	resp, body := get(t, url, "application/json")
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != http.StatusOK || list.GroupVersion != "v1" {
		t.Fatalf("%s: %d %v %s", url, resp.StatusCode, err, body)
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return resp, names
}

func TestCRDsInTheCoreGroup(t *testing.T) {
	s := startTestServer(t, nil)
	// A cluster bound to kcp's compute export serves Services and Pods from
	// bound CRDs of the core group; a built-in ConfigMap shadows a CRD.
	s.CRDs.set("a", newCRD("", "Widget"), newCRD("", "ConfigMap"))

	groups, resources := serverResources(t, discoveryClient(t, s, "a"))
	if want := []string{"", "apiextensions.k8s.io", "coordination.k8s.io"}; !reflect.DeepEqual(groups, want) {
		t.Errorf("groups = %q, want %q", groups, want)
	}
	want := append([]string{"v1 widgets", "v1 widgets/scale", "v1 widgets/status"}, builtinResources...)
	sort.Strings(want)
	if !reflect.DeepEqual(resources, want) {
		t.Errorf("resources = %q\nwant %q", resources, want)
	}
	legacyGroups, legacyResources := serverResources(t, discoveryClient(t, s, "a").WithLegacy())
	if !reflect.DeepEqual(legacyGroups, groups) || !reflect.DeepEqual(legacyResources, resources) {
		t.Errorf("legacy discovery = %q %q, want %q %q", legacyGroups, legacyResources, groups, resources)
	}

	// /apis lists no group "": clients would merge it over /api's.
	for _, c := range []string{"a", "c"} {
		resp, body := get(t, s.URL+"/clusters/"+c+"/apis", acceptAggregatedV2)
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/clusters/%s/apis: %d %v", c, resp.StatusCode, err)
		}
		for _, g := range list.Items {
			if g.Name == "" {
				t.Errorf("/clusters/%s/apis lists the core group", c)
			}
		}
	}

	// /api/v1 of a has the CRD's resources; of c exactly the built-in ones.
	if _, names := coreV1Names(t, s.URL+"/clusters/a/api/v1"); !reflect.DeepEqual(names, []string{"configmaps", "widgets", "widgets/scale", "widgets/status"}) {
		t.Errorf("/api/v1 of a lists %q", names)
	}
	_, builtin := get(t, s.URL+"/api/v1", "application/json")
	if _, body := get(t, s.URL+"/clusters/c/api/v1", "application/json"); string(body) != string(builtin) {
		t.Errorf("/api/v1 of a cluster without CRDs differs from the built-in one:\n%s\n%s", body, builtin)
	}
	_, builtinVersions := get(t, s.URL+"/api", "application/json")
	if _, body := get(t, s.URL+"/clusters/a/api", "application/json"); string(body) != string(builtinVersions) {
		t.Errorf("legacy /api differs: %s", body)
	}

	// Aggregated /api, v2 and v2beta1, with its ETag.
	resp, body := get(t, s.URL+"/clusters/a/api", acceptAggregatedV2)
	etag := resp.Header.Get("ETag")
	var core apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &core); err != nil || etag == "" || len(core.Items) != 1 || core.Items[0].Name != "" {
		t.Fatalf("aggregated /api: %v %v %s", err, resp.Header, body)
	}
	var aggregated []string
	for _, r := range core.Items[0].Versions[0].Resources {
		aggregated = append(aggregated, r.Resource)
	}
	if !reflect.DeepEqual(aggregated, []string{"configmaps", "widgets"}) {
		t.Errorf("aggregated /api lists %q", aggregated)
	}
	if resp, _ := get(t, s.URL+"/clusters/a/api", acceptAggregatedV2, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: status %d, want 304", resp.StatusCode)
	}
	if resp, _ := get(t, s.URL+"/clusters/c/api", acceptAggregatedV2); resp.Header.Get("ETag") == etag {
		t.Errorf("a cluster without CRDs has the merged ETag")
	}
	// v2beta1 is answered as for /apis (the generic server's codecs may
	// no longer have it).
	const acceptV2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	s.CRDs.set("b", newCRD("", "Widget"), newCRD("example.com", "Gizmo"))
	apisResp, _ := get(t, s.URL+"/clusters/b/apis", acceptV2beta1)
	if resp, body := get(t, s.URL+"/clusters/b/api", acceptV2beta1); resp.StatusCode != apisResp.StatusCode ||
		(resp.StatusCode == http.StatusOK && !strings.Contains(string(body), `"resource":"widgets"`)) {
		t.Errorf("aggregated /api v2beta1: %d (/apis: %d) %s", resp.StatusCode, apisResp.StatusCode, body)
	}

	// OpenAPI v3 of core v1 has both, at /api/v1 paths.
	doc, err := openapi3.NewRoot(discoveryClient(t, s, "a").OpenAPIV3()).GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Paths.Paths["/api/v1/namespaces/{namespace}/widgets"] == nil || doc.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"] == nil {
		t.Errorf("core v1 OpenAPI v3 of a lacks the built-in or the CRD resource: %v", doc.Paths.Paths)
	}
	for p := range doc.Paths.Paths {
		if strings.HasPrefix(p, "/apis/") {
			t.Errorf("core v1 OpenAPI v3 has %s", p)
		}
	}
	if doc, err := openapi3.NewRoot(discoveryClient(t, s, "c").OpenAPIV3()).GVSpec(schema.GroupVersion{Version: "v1"}); err != nil || doc.Paths.Paths["/api/v1/namespaces/{namespace}/widgets"] != nil {
		t.Errorf("core v1 in another cluster: %v", err)
	}

	// And OpenAPI v2.
	_, body = get(t, s.URL+"/clusters/a/openapi/v2", "application/json")
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil {
		t.Fatal(err)
	}
	if _, ok := sw.Paths.Paths["/api/v1/namespaces/{namespace}/widgets"]; !ok {
		t.Errorf("OpenAPI v2 of a lacks the CRD resource")
	}
}
