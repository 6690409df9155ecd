package discovery

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	restclient "k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// requestLog records the paths a client asked for.
type requestLog struct {
	lock  sync.Mutex
	paths []string
}

func (l *requestLog) RoundTrip(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		l.lock.Lock()
		l.paths = append(l.paths, req.URL.Path)
		l.lock.Unlock()
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// clusterConfig is a client config for one logical cluster of s ("" for the
// unprefixed system:admin cluster).
func clusterConfig(s *testServer, cluster string) *restclient.Config {
	host := s.URL
	if cluster != "" {
		host += "/clusters/" + cluster
	}
	return &restclient.Config{Host: host}
}

func discoveryClient(t *testing.T, s *testServer, cluster string) *clientdiscovery.DiscoveryClient {
	t.Helper()
	dc, err := clientdiscovery.NewDiscoveryClientForConfig(clusterConfig(s, cluster))
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// serverResources returns "group/version resource" for every resource a
// client discovers, sorted, and the group names in server order.
func serverResources(t *testing.T, dc clientdiscovery.DiscoveryInterface) (groups []string, resources []string) {
	t.Helper()
	apiGroups, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	for _, g := range apiGroups {
		groups = append(groups, g.Name)
	}
	for _, l := range lists {
		for _, r := range l.APIResources {
			resources = append(resources, l.GroupVersion+" "+r.Name)
		}
	}
	sort.Strings(resources)
	return groups, resources
}

var builtinResources = []string{
	"apiextensions.k8s.io/v1 customresourcedefinitions",
	"coordination.k8s.io/v1 leases",
	"v1 configmaps",
}

func TestDiscoveryPerCluster(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"), newCRD("example.com", "Sprocket",
		withVersions(testVersion("v1alpha1", true, false), testVersion("v1", true, true), testVersion("v2beta1", true, false), testVersion("v0", false, false)),
		withoutSubresources))
	s.CRDs.set("b", newCRD("other.io", "Gizmo", clusterScoped), newCRD("hidden.io", "Pending", notEstablished))

	for _, tc := range []struct {
		cluster       string
		wantGroups    []string
		wantResources []string
	}{
		{
			cluster:    "a",
			wantGroups: []string{"", "apiextensions.k8s.io", "coordination.k8s.io", "example.com"},
			wantResources: append([]string{
				"example.com/v1 sprockets",
				"example.com/v1 widgets",
				"example.com/v1 widgets/scale",
				"example.com/v1 widgets/status",
				"example.com/v1alpha1 sprockets",
				"example.com/v2beta1 sprockets",
			}, builtinResources...),
		},
		{
			cluster:       "b",
			wantGroups:    []string{"", "apiextensions.k8s.io", "coordination.k8s.io", "other.io"},
			wantResources: append([]string{"other.io/v1 gizmos", "other.io/v1 gizmos/scale", "other.io/v1 gizmos/status"}, builtinResources...),
		},
		{
			cluster:       "c",
			wantGroups:    []string{"", "apiextensions.k8s.io", "coordination.k8s.io"},
			wantResources: builtinResources,
		},
		{
			cluster:       "*",
			wantGroups:    []string{"", "apiextensions.k8s.io", "coordination.k8s.io"},
			wantResources: builtinResources,
		},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			var log requestLog
			config := clusterConfig(s, tc.cluster)
			config.Wrap(log.RoundTrip)
			dc, err := clientdiscovery.NewDiscoveryClientForConfig(config)
			if err != nil {
				t.Fatal(err)
			}
			groups, resources := serverResources(t, dc)
			sort.Strings(tc.wantResources)
			if !reflect.DeepEqual(groups, tc.wantGroups) {
				t.Errorf("groups = %q, want %q", groups, tc.wantGroups)
			}
			if !reflect.DeepEqual(resources, tc.wantResources) {
				t.Errorf("resources = %q\nwant %q", resources, tc.wantResources)
			}
			// Aggregated discovery answers in two requests, with no
			// fallback to the legacy per group version documents.
			if want := []string{"/clusters/" + tc.cluster + "/api", "/clusters/" + tc.cluster + "/apis"}; !reflect.DeepEqual(log.paths, want) {
				t.Errorf("requests = %q, want %q", log.paths, want)
			}
		})
	}

	t.Run("versions by kube-aware priority", func(t *testing.T) {
		groups, err := discoveryClient(t, s, "a").ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups.Groups {
			if g.Name != "example.com" {
				continue
			}
			var versions []string
			for _, v := range g.Versions {
				versions = append(versions, v.Version)
			}
			if want := []string{"v1", "v2beta1", "v1alpha1"}; !reflect.DeepEqual(versions, want) || g.PreferredVersion.Version != "v1" {
				t.Errorf("versions = %q preferred %q, want %q preferred v1", versions, g.PreferredVersion.Version, want)
			}
		}
	})
}

// comparableResource is the part of a resource both discovery formats carry
// the same way.
type comparableResource struct {
	Name, Kind, GroupVersion      string
	Namespaced                    bool
	Verbs, ShortNames, Categories string
}

// comparableGroups describes groups by name, versions and preferred version
// (only legacy discovery carries server addresses).
func comparableGroups(groups []*metav1.APIGroup) []string {
	var out []string
	for _, g := range groups {
		d := g.Name + " preferred " + g.PreferredVersion.GroupVersion + ":"
		for _, v := range g.Versions {
			d += " " + v.GroupVersion
		}
		out = append(out, d)
	}
	return out
}

func comparableResources(lists []*metav1.APIResourceList) []comparableResource {
	var out []comparableResource
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			if r.Group == "" && r.Version == "" {
				r.Group, r.Version = gv.Group, gv.Version
			}
			out = append(out, comparableResource{
				Name: r.Name, Kind: r.Kind, GroupVersion: l.GroupVersion + " " + r.Group + "/" + r.Version, Namespaced: r.Namespaced,
				Verbs: strings.Join(r.Verbs, ","), ShortNames: strings.Join(r.ShortNames, ","), Categories: strings.Join(r.Categories, ","),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupVersion+out[i].Name < out[j].GroupVersion+out[j].Name })
	return out
}

func TestLegacyAndAggregatedAgree(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget", withNames([]string{"wd"}, []string{"all"})),
		newCRD("example.com", "Sprocket", clusterScoped, terminating, withVersions(testVersion("v1", true, true), testVersion("v2", true, false))))
	s.CRDs.set("b", newCRD("other.io", "Gizmo"))

	for _, cluster := range []string{"a", "b", "c"} {
		t.Run(cluster, func(t *testing.T) {
			aggregated := discoveryClient(t, s, cluster)
			legacy := discoveryClient(t, s, cluster).WithLegacy()

			aggGroups, aggLists, err := aggregated.ServerGroupsAndResources()
			if err != nil {
				t.Fatal(err)
			}
			legGroups, legLists, err := legacy.ServerGroupsAndResources()
			if err != nil {
				t.Fatal(err)
			}
			if a, l := comparableGroups(aggGroups), comparableGroups(legGroups); !reflect.DeepEqual(a, l) {
				t.Errorf("groups differ:\naggregated %q\nlegacy     %q", a, l)
			}
			if a, l := comparableResources(aggLists), comparableResources(legLists); !reflect.DeepEqual(a, l) {
				t.Errorf("resources differ:\naggregated %+v\nlegacy     %+v", a, l)
			}
		})
	}

	t.Run("legacy details", func(t *testing.T) {
		list, err := discoveryClient(t, s, "a").ServerResourcesForGroupVersion("example.com/v1")
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]metav1.APIResource{}
		for _, r := range list.APIResources {
			byName[r.Name] = r
		}
		widgets := byName["widgets"]
		if widgets.SingularName != "widget" || widgets.StorageVersionHash == "" || !widgets.Namespaced ||
			!reflect.DeepEqual(widgets.ShortNames, []string{"wd"}) || !reflect.DeepEqual(widgets.Categories, []string{"all"}) {
			t.Errorf("widgets = %+v", widgets)
		}
		if got := byName["sprockets"].Verbs; !reflect.DeepEqual(got, metav1.Verbs{"delete", "deletecollection", "get", "list", "watch"}) {
			t.Errorf("verbs of a terminating CRD = %q", got)
		}
		if scale := byName["widgets/scale"]; scale.Group != "autoscaling" || scale.Version != "v1" || scale.Kind != "Scale" {
			t.Errorf("widgets/scale = %+v", scale)
		}
	})
}

// get sends a GET with an Accept header and returns the response with its
// body read.
func get(t *testing.T, url, accept string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestUnknownGroupsAreNotFound(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"))
	s.CRDs.set("b", newCRD("other.io", "Gizmo"))

	for _, tc := range []struct {
		cluster, path string
		want          int
	}{
		{"a", "/apis/example.com", http.StatusOK},
		{"a", "/apis/example.com/v1", http.StatusOK},
		{"a", "/apis/example.com/v2", http.StatusNotFound},
		{"a", "/apis/coordination.k8s.io", http.StatusOK},
		{"a", "/apis/coordination.k8s.io/v1", http.StatusOK},
		{"a", "/apis/coordination.k8s.io/v1beta1", http.StatusNotFound},
		{"b", "/apis/example.com", http.StatusNotFound},
		{"b", "/apis/example.com/v1", http.StatusNotFound},
		{"c", "/apis/example.com", http.StatusNotFound},
		{"c", "/apis/example.com/v1", http.StatusNotFound},
		{"c", "/apis/coordination.k8s.io/v1", http.StatusOK},
		{"b", "/openapi/v3/apis/example.com/v1", http.StatusNotFound},
		{"c", "/openapi/v3/apis/example.com/v1", http.StatusNotFound},
		{"a", "/openapi/v3/apis/example.com/v1", http.StatusOK},
		{"c", "/openapi/v3/apis/coordination.k8s.io/v1", http.StatusOK},
	} {
		t.Run(tc.cluster+tc.path, func(t *testing.T) {
			resp, body := get(t, s.URL+"/clusters/"+tc.cluster+tc.path, "application/json")
			if resp.StatusCode != tc.want {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if tc.want == http.StatusNotFound && !strings.Contains(string(body), `"kind":"Status"`) {
				t.Errorf("404 is not a Status: %s", body)
			}
		})
	}

	_, err := discoveryClient(t, s, "b").ServerResourcesForGroupVersion("example.com/v1")
	if !apierrors.IsNotFound(err) {
		t.Errorf("client-go for a CRD group version of another cluster: err = %v, want NotFound", err)
	}
}

func TestAggregatedDiscoveryCaching(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"))
	url := s.URL + "/clusters/a/apis"

	resp, body := get(t, url, acceptAggregatedV2)
	if got, want := resp.Header.Get("Content-Type"), "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.Header.Get("Vary") != "Accept" {
		t.Fatalf("headers = %v", resp.Header)
	}
	if !strings.Contains(string(body), `"name":"example.com"`) {
		t.Errorf("body lacks the CRD group: %s", body)
	}

	if resp, body := get(t, url, clientdiscovery.AcceptV2NoPeer); !strings.Contains(string(body), `"name":"example.com"`) ||
		resp.Header.Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
		t.Errorf("the no-peer profile: %v %s", resp.Header, body)
	}
	if resp, _ := get(t, url, acceptAggregatedV2, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: status %d, want 304", resp.StatusCode)
	}
	builtin, _ := get(t, s.URL+"/clusters/c/apis", acceptAggregatedV2)
	if builtin.Header.Get("ETag") == etag {
		t.Errorf("a cluster with CRDs has the built-in ETag")
	}

	s.CRDs.set("a", newCRD("example.com", "Widget", resourceVersion("2"), withNames([]string{"wd"}, nil)))
	resp, body = get(t, url, acceptAggregatedV2, "If-None-Match", etag)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == etag {
		t.Errorf("after a CRD change: status %d, ETag %s, want 200 and a new ETag", resp.StatusCode, resp.Header.Get("ETag"))
	}
	if !strings.Contains(string(body), `"shortNames":["wd"]`) {
		t.Errorf("the CRD change is not served: %s", body)
	}

	const protobuf = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	resp, body = get(t, url, protobuf)
	if got := resp.Header.Get("Content-Type"); got != protobuf {
		t.Fatalf("Content-Type = %q, want %q", got, protobuf)
	}
	info, ok := runtime.SerializerInfoForMediaType(s.Handler.aggregated.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	if _, _, err := info.Serializer.Decode(body, nil, &list); err != nil {
		t.Fatalf("decoding protobuf: %v", err)
	}
	if n := len(list.Items); n == 0 || list.Items[n-1].Name != "example.com" {
		t.Errorf("protobuf list = %+v", list.Items)
	}
}

func TestBuiltinDocumentsForWildcardAndEmptyClusters(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget"))

	for _, tc := range []struct{ path, accept string }{
		{"/apis", acceptAggregatedV2},
		{"/apis", "application/json"},
		{"/api", acceptAggregatedV2},
		{"/openapi/v3", ""},
		{"/openapi/v2", "application/json"},
	} {
		_, want := get(t, s.URL+tc.path, tc.accept)
		for _, cluster := range []string{"*", "c"} {
			if _, got := get(t, s.URL+"/clusters/"+cluster+tc.path, tc.accept); string(got) != string(want) {
				t.Errorf("%s in cluster %s differs from the built-in document", tc.path, cluster)
			}
		}
		if _, got := get(t, s.URL+"/clusters/a"+tc.path, tc.accept); string(got) == string(want) && tc.path != "/api" {
			t.Errorf("%s in cluster a is the built-in document", tc.path)
		}
	}

	// Across all clusters, the CRDs the shard serves there.
	s.CRDs.set("*", newCRD("across.example.com", "Gadget"))
	_, body := get(t, s.URL+"/clusters/*/apis", "application/json")
	if !strings.Contains(string(body), "across.example.com") || strings.Contains(string(body), `"example.com"`) {
		t.Errorf("/apis across all clusters lists the CRDs for the wildcard, not a cluster's:\n%s", body)
	}
}

func TestCRDsInABuiltinGroup(t *testing.T) {
	s := startTestServer(t, nil)
	// A CRD may add resources to a built-in group version and versions to a
	// built-in group; a built-in resource of the same name or kind shadows
	// a CRD's in its group version.
	s.CRDs.set("a",
		newCRD("coordination.k8s.io", "Ballot", withVersions(testVersion("v1", true, false), testVersion("v2alpha1", true, true))),
		newCRD("coordination.k8s.io", "Lease", withVersions(testVersion("v1", true, false), testVersion("v3", true, true))))

	groups, resources := serverResources(t, discoveryClient(t, s, "a"))
	if want := []string{"", "apiextensions.k8s.io", "coordination.k8s.io"}; !reflect.DeepEqual(groups, want) {
		t.Errorf("groups = %q, want %q", groups, want)
	}
	want := append([]string{
		"coordination.k8s.io/v1 ballots",
		"coordination.k8s.io/v1 ballots/scale",
		"coordination.k8s.io/v1 ballots/status",
		"coordination.k8s.io/v2alpha1 ballots",
		"coordination.k8s.io/v2alpha1 ballots/scale",
		"coordination.k8s.io/v2alpha1 ballots/status",
		"coordination.k8s.io/v3 leases",
		"coordination.k8s.io/v3 leases/scale",
		"coordination.k8s.io/v3 leases/status",
	}, builtinResources...)
	sort.Strings(want)
	if !reflect.DeepEqual(resources, want) {
		t.Errorf("resources = %q\nwant %q", resources, want)
	}

	legacy, err := discoveryClient(t, s, "a").WithLegacy().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	if got := comparableGroups(pointers(legacy.Groups)); !reflect.DeepEqual(got[2], "coordination.k8s.io preferred coordination.k8s.io/v1: coordination.k8s.io/v1 coordination.k8s.io/v3 coordination.k8s.io/v2alpha1") {
		t.Errorf("legacy groups = %q", got)
	}
	resp, body := get(t, s.URL+"/clusters/a/apis/coordination.k8s.io", "application/json")
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), `"groupVersion":"coordination.k8s.io/v1"`) != 2 { // listed and preferred
		t.Errorf("/apis/coordination.k8s.io: %d %s", resp.StatusCode, body)
	}
	var list metav1.APIResourceList
	resp, body = get(t, s.URL+"/clusters/a/apis/coordination.k8s.io/v1", "application/json")
	if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/apis/coordination.k8s.io/v1: %d %v %s", resp.StatusCode, err, body)
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name+" "+r.Kind)
	}
	if want := []string{"ballots Ballot", "ballots/scale Scale", "ballots/status Ballot", "leases Lease"}; list.GroupVersion != "coordination.k8s.io/v1" || !reflect.DeepEqual(names, want) {
		t.Errorf("/apis/coordination.k8s.io/v1 lists %s %q, want %q", list.GroupVersion, names, want)
	}
	if _, body := get(t, s.URL+"/clusters/c/apis/coordination.k8s.io", "application/json"); strings.Contains(string(body), "v2alpha1") {
		t.Errorf("another cluster sees the CRD version: %s", body)
	}
	if _, body := get(t, s.URL+"/clusters/c/apis/coordination.k8s.io/v1", "application/json"); strings.Contains(string(body), "ballots") {
		t.Errorf("another cluster sees the CRD resource: %s", body)
	}

	// OpenAPI v3: the built-in group version's document gains the CRD's
	// resource under a new hash, the built-in one keeps its own.
	builtinRoot, _ := fetchOpenAPIV3Root(t, s.URL+"/openapi/v3")
	rootA := openapi3.NewRoot(discoveryClient(t, s, "a").OpenAPIV3())
	doc, err := rootA.GVSpec(leasesV1)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Components.Schemas["io.k8s.api.coordination.v1.Lease"] == nil || doc.Components.Schemas["io.k8s.coordination.v1.Ballot"] == nil ||
		doc.Paths.Paths["/apis/coordination.k8s.io/v1/namespaces/{namespace}/ballots"] == nil || doc.Paths.Paths["/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"] == nil {
		t.Errorf("coordination.k8s.io/v1 in a lacks the built-in or the CRD resource: %v", doc.Paths.Paths)
	}
	root, _ := fetchOpenAPIV3Root(t, s.URL+"/clusters/a/openapi/v3")
	if p := "apis/coordination.k8s.io/v1"; root.Paths[p] == builtinRoot.Paths[p] {
		t.Errorf("the merged document has the built-in hash: %v", root.Paths[p])
	}
	if doc, err := openapi3.NewRoot(discoveryClient(t, s, "c").OpenAPIV3()).GVSpec(leasesV1); err != nil || doc.Components.Schemas["io.k8s.coordination.v1.Ballot"] != nil {
		t.Errorf("coordination.k8s.io/v1 in another cluster: %v", err)
	}

	// OpenAPI v2 has both too.
	_, body = get(t, s.URL+"/clusters/a/openapi/v2", "application/json")
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/apis/coordination.k8s.io/v1/namespaces/{namespace}/ballots", "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", "/apis/coordination.k8s.io/v3/leases"} {
		if _, ok := sw.Paths.Paths[p]; !ok {
			t.Errorf("OpenAPI v2 of a lacks %s", p)
		}
	}
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
