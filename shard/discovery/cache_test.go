package discovery

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestFingerprint(t *testing.T) {
	widget := newCRD("example.com", "Widget")
	gadget := newCRD("example.com", "Gadget")
	base := fingerprint([]*apiextensionsv1.CustomResourceDefinition{widget, gadget})
	for _, tc := range []struct {
		name string
		crds []*apiextensionsv1.CustomResourceDefinition
		same bool
	}{
		{"same CRDs in another order", []*apiextensionsv1.CustomResourceDefinition{gadget, widget}, true},
		{"one CRD removed", []*apiextensionsv1.CustomResourceDefinition{widget}, false},
		{"one CRD updated", []*apiextensionsv1.CustomResourceDefinition{widget, newCRD("example.com", "Gadget", resourceVersion("7"))}, false},
		{"one CRD recreated", []*apiextensionsv1.CustomResourceDefinition{widget, func() *apiextensionsv1.CustomResourceDefinition {
			c := newCRD("example.com", "Gadget")
			c.UID = "other"
			return c
		}()}, false},
		{"one CRD added", []*apiextensionsv1.CustomResourceDefinition{widget, gadget, newCRD("other.io", "Gizmo")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fingerprint(tc.crds) == base; got != tc.same {
				t.Errorf("same fingerprint = %v, want %v", got, tc.same)
			}
		})
	}
}

// discoveredResources returns the resource names cluster discovers through
// aggregated discovery.
func discoveredResources(t *testing.T, s *testServer, cluster string) string {
	t.Helper()
	_, resources := serverResources(t, discoveryClient(t, s, cluster))
	return strings.Join(resources, ",")
}

func TestCacheIsBounded(t *testing.T) {
	s := startTestServer(t, func(c *Config) {
		c.MaxClusters = 2
	})
	for _, c := range []string{"a", "b", "d"} {
		s.CRDs.set(logicalcluster.Name(c), newCRD(c+".example.com", "Widget"))
	}
	for _, c := range []string{"a", "b", "d", "empty"} {
		if got := discoveredResources(t, s, c); c != "empty" && !strings.Contains(got, c+".example.com/v1 widgets") {
			t.Errorf("cluster %s discovers %s", c, got)
		}
		if resp, _ := get(t, s.URL+"/clusters/"+c+"/openapi/v2", "application/json"); resp.StatusCode != http.StatusOK {
			t.Errorf("OpenAPI v2 of %s: status %d", c, resp.StatusCode)
		}
	}
	if n := s.Handler.docs.len(); n != 2 {
		t.Errorf("%d clusters cached, want 2", n)
	}
	if n := s.Handler.openAPIV2Docs.len(); n != 2 {
		t.Errorf("%d OpenAPI v2 documents cached, want 2", n)
	}
	for c, want := range map[logicalcluster.Name]bool{"a": false, "b": true, "d": true, "empty": false} {
		if _, ok := s.Handler.docs.get(c); ok != want {
			t.Errorf("cluster %s cached = %v, want %v", c, ok, want)
		}
		if _, ok := s.Handler.openAPIV2Docs.get(c); ok != want {
			t.Errorf("cluster %s: OpenAPI v2 cached = %v, want %v", c, ok, want)
		}
	}
	// An evicted cluster is rebuilt on demand.
	if got := discoveredResources(t, s, "a"); !strings.Contains(got, "a.example.com/v1 widgets") {
		t.Errorf("cluster a after eviction discovers %s", got)
	}
}

// fakeDoc is a document of a given size.
type fakeDoc struct{ bytes int64 }

func (d *fakeDoc) size() int64 { return d.bytes }

func TestSizedClusterCache(t *testing.T) {
	// A step adds, gets or resizes the document of one cluster.
	type step struct {
		add, get, resize logicalcluster.Name
		bytes            int64
	}
	for _, tc := range []struct {
		name      string
		steps     []step
		wantKept  []logicalcluster.Name
		wantBytes int64
	}{
		{
			name:      "the least recently used documents go beyond the byte budget",
			steps:     []step{{add: "a", bytes: 40}, {add: "b", bytes: 40}, {get: "a"}, {add: "c", bytes: 40}},
			wantKept:  []logicalcluster.Name{"a", "c"},
			wantBytes: 80,
		},
		{
			name:      "and beyond the number of clusters",
			steps:     []step{{add: "a", bytes: 1}, {add: "b", bytes: 1}, {add: "c", bytes: 1}, {add: "d", bytes: 1}},
			wantKept:  []logicalcluster.Name{"b", "c", "d"},
			wantBytes: 3,
		},
		{
			name:      "a replaced document is accounted once",
			steps:     []step{{add: "a", bytes: 40}, {add: "a", bytes: 50}, {add: "b", bytes: 50}},
			wantKept:  []logicalcluster.Name{"a", "b"},
			wantBytes: 100,
		},
		{
			name:      "a grown document evicts others",
			steps:     []step{{add: "a", bytes: 30}, {add: "b", bytes: 30}, {resize: "b", bytes: 80}},
			wantKept:  []logicalcluster.Name{"b"},
			wantBytes: 80,
		},
		{
			name:      "a document over the budget is not kept and evicts nothing",
			steps:     []step{{add: "a", bytes: 30}, {add: "b", bytes: 101}, {add: "c", bytes: 30}, {resize: "c", bytes: 101}},
			wantKept:  []logicalcluster.Name{"a"},
			wantBytes: 30,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newSizedClusterCache[*fakeDoc](3, 100)
			docs := map[logicalcluster.Name]*fakeDoc{}
			for _, s := range tc.steps {
				switch {
				case s.add != "":
					docs[s.add] = &fakeDoc{bytes: s.bytes}
					c.add(s.add, docs[s.add])
				case s.get != "":
					c.get(s.get)
				case s.resize != "":
					docs[s.resize].bytes = s.bytes
					c.resize(s.resize, docs[s.resize])
				}
			}
			var kept []logicalcluster.Name
			for _, cluster := range []logicalcluster.Name{"a", "b", "c", "d"} {
				if d, ok := c.get(cluster); ok {
					if d != docs[cluster] {
						t.Errorf("%s: another document", cluster)
					}
					kept = append(kept, cluster)
				}
			}
			if !slices.Equal(kept, tc.wantKept) || c.size() != tc.wantBytes || c.len() != len(tc.wantKept) {
				t.Errorf("kept %v of %d bytes, want %v of %d", kept, c.size(), tc.wantKept, tc.wantBytes)
			}
		})
	}
}

// openAPIV2Both asks for a cluster's OpenAPI v2 document in JSON and in
// protobuf, as different clients do.
func openAPIV2Both(t *testing.T, s *testServer, cluster string) {
	t.Helper()
	for _, accept := range []string{"application/json", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"} {
		if resp, body := get(t, s.URL+"/clusters/"+cluster+"/openapi/v2", accept); resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Fatalf("OpenAPI v2 of %s as %s: status %d", cluster, accept, resp.StatusCode)
		}
	}
}

func TestOpenAPIV2CacheIsBoundedByBytes(t *testing.T) {
	// One document's size, JSON first, then with protobuf.
	probe := startTestServer(t, nil)
	probe.CRDs.set("a", newCRD("a.example.com", "Widget"))
	get(t, probe.URL+"/clusters/a/openapi/v2", "application/json")
	jsonOnly := probe.Handler.openAPIV2Docs.size()
	openAPIV2Both(t, probe, "a")
	both := probe.Handler.openAPIV2Docs.size()
	if jsonOnly <= 0 || both <= jsonOnly {
		t.Fatalf("cached bytes: %d with JSON, %d with protobuf too", jsonOnly, both)
	}
	t.Logf("OpenAPI v2 document of the test server with one CRD: %d bytes of JSON, %d with protobuf", jsonOnly, both)

	// Room for two documents of that size, not three.
	budget := both * 5 / 2
	s := startTestServer(t, func(c *Config) { c.MaxOpenAPIV2Bytes = budget })
	for _, c := range []string{"a", "b", "d"} {
		s.CRDs.set(logicalcluster.Name(c), newCRD(c+".example.com", "Widget"))
		openAPIV2Both(t, s, c)
		if got := s.Handler.openAPIV2Docs.size(); got > budget {
			t.Errorf("after %s: %d bytes cached, budget %d", c, got, budget)
		}
	}
	for c, want := range map[logicalcluster.Name]bool{"a": false, "b": true, "d": true} {
		if _, ok := s.Handler.openAPIV2Docs.get(c); ok != want {
			t.Errorf("cluster %s: OpenAPI v2 cached = %v, want %v", c, ok, want)
		}
	}

	// Idle clusters cost nothing: documents exist only once asked for.
	s.CRDs.set("idle", newCRD("idle.example.com", "Widget"))
	discoveredResources(t, s, "idle")
	if _, ok := s.Handler.openAPIV2Docs.get("idle"); ok {
		t.Errorf("discovery built an OpenAPI v2 document")
	}

	// A document larger than the budget is served, not kept.
	tiny := startTestServer(t, func(c *Config) { c.MaxOpenAPIV2Bytes = jsonOnly / 2 })
	tiny.CRDs.set("a", newCRD("a.example.com", "Widget"))
	openAPIV2Both(t, tiny, "a")
	if n, size := tiny.Handler.openAPIV2Docs.len(), tiny.Handler.openAPIV2Docs.size(); n != 0 || size != 0 {
		t.Errorf("%d documents of %d bytes cached over the budget", n, size)
	}
}

func TestCRDChanges(t *testing.T) {
	s := startTestServer(t, nil)
	widget := newCRD("example.com", "Widget")
	s.CRDs.set("a", widget)

	if got := discoveredResources(t, s, "a"); !strings.Contains(got, "example.com/v1 widgets") {
		t.Fatalf("discovers %s", got)
	}
	get(t, s.URL+"/clusters/a/openapi/v2", "application/json")
	first, ok := s.Handler.docs.get("a")
	if !ok {
		t.Fatal("cluster a is not cached")
	}
	discoveredResources(t, s, "a")
	if again, _ := s.Handler.docs.get("a"); again != first {
		t.Errorf("unchanged CRDs rebuilt the documents")
	}

	t.Run("Invalidate drops the documents", func(t *testing.T) {
		s.Handler.Invalidate("a")
		s.Handler.Invalidate("unknown")
		if _, ok := s.Handler.docs.get("a"); ok {
			t.Errorf("discovery is still cached")
		}
		if _, ok := s.Handler.openAPIV2Docs.get("a"); ok {
			t.Errorf("OpenAPI v2 is still cached")
		}
	})

	t.Run("an added CRD is served without Invalidate", func(t *testing.T) {
		s.CRDs.set("a", widget, newCRD("example.com", "Gadget"))
		if got := discoveredResources(t, s, "a"); !strings.Contains(got, "example.com/v1 gadgets") {
			t.Errorf("discovers %s", got)
		}
	})

	t.Run("an updated CRD is served without Invalidate", func(t *testing.T) {
		s.CRDs.set("a", widget, newCRD("example.com", "Gadget", resourceVersion("2"), notEstablished))
		if got := discoveredResources(t, s, "a"); strings.Contains(got, "gadgets") {
			t.Errorf("discovers %s", got)
		}
	})

	t.Run("deleted CRDs leave the cluster with the built-in documents", func(t *testing.T) {
		s.CRDs.set("a")
		if got := discoveredResources(t, s, "a"); strings.Contains(got, "example.com") {
			t.Errorf("discovers %s", got)
		}
		if resp, _ := get(t, s.URL+"/clusters/a/apis/example.com/v1", "application/json"); resp.StatusCode != http.StatusNotFound {
			t.Errorf("deleted group version: status %d, want 404", resp.StatusCode)
		}
		if resp, _ := get(t, s.URL+"/clusters/a/openapi/v3/apis/example.com/v1", "application/json"); resp.StatusCode != http.StatusNotFound {
			t.Errorf("deleted OpenAPI v3 group version: status %d, want 404", resp.StatusCode)
		}
	})
}
