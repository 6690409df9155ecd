package discovery

import (
	"net/http"
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
		c.MaxOpenAPIV2Clusters = 1
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
	if n := s.Handler.openAPIV2Docs.len(); n != 1 {
		t.Errorf("%d OpenAPI v2 documents cached, want 1", n)
	}
	for c, want := range map[logicalcluster.Name]bool{"a": false, "b": true, "d": true, "empty": false} {
		if _, ok := s.Handler.docs.get(c); ok != want {
			t.Errorf("cluster %s cached = %v, want %v", c, ok, want)
		}
	}
	// An evicted cluster is rebuilt on demand.
	if got := discoveredResources(t, s, "a"); !strings.Contains(got, "a.example.com/v1 widgets") {
		t.Errorf("cluster a after eviction discovers %s", got)
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
