package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// builtinGroupCRD returns a CRD <plural>.<group> serving versions (the first
// stores), with a status subresource and a documented spec.size. CRDs of
// *.k8s.io groups carry the api-approved annotation they need.
func builtinGroupCRD(plural, group string, scope apiextensionsv1.ResourceScope, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	singular := strings.TrimSuffix(plural, "s")
	kind := strings.ToUpper(singular[:1]) + singular[1:]
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: singular, Kind: kind, ListKind: kind + "List"},
			Scope: scope,
		},
	}
	if strings.HasSuffix(group, ".k8s.io") {
		crd.Annotations = map[string]string{apiextensionsv1.KubeAPIApprovedAnnotation: "unapproved, testing discovery fidelity"}
	}
	for i, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: i == 0,
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"size": {Type: "integer", Description: "Size of the " + singular + "."},
					}},
					"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
				},
			}},
		})
	}
	return crd
}

// advertisedResource is a listable resource that discovery advertises.
type advertisedResource struct {
	gvr schema.GroupVersionResource
}

func (r advertisedResource) String() string {
	return r.gvr.GroupVersion().String() + " " + r.gvr.Resource
}

// advertised lists every resource with the list verb that a cluster's
// discovery advertises, in every group version, through aggregated or
// legacy discovery, as `kubectl api-resources` finds them.
func advertised(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, legacy bool) []advertisedResource {
	t.Helper()
	client, err := discovery.NewDiscoveryClientForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	var dc discovery.DiscoveryInterface = client
	if legacy {
		dc = client.WithLegacy()
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery of %s (legacy %v): %v", cluster, legacy, err)
	}
	var out []advertisedResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			out = append(out, advertisedResource{gvr: gv.WithResource(r.Name)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// TestDiscoveryAdvertisesOnlyWhatIsServed creates CRDs in built-in groups,
// in a built-in version and in new ones, and checks that every resource
// discovery advertises answers a list, and that a cluster without the CRDs
// neither advertises nor serves them. kube-apiserver advertises CRD
// versions of built-in groups and then answers 404 (its built-in group's
// web service claims /apis/<group>/...), and hides CRD resources of built-in
// group versions; Tessera serves both.
func TestDiscoveryAdvertisesOnlyWhatIsServed(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("fidelity-a"), logicalcluster.Name("fidelity-b")
	createCluster(t, s, a)
	createCluster(t, s, b)

	served := []*apiextensionsv1.CustomResourceDefinition{
		// A built-in version (leases are coordination.k8s.io/v1) and a new one.
		builtinGroupCRD("ballots", "coordination.k8s.io", apiextensionsv1.NamespaceScoped, "v1", "v2alpha1"),
		// A built-in version of a kcp group.
		builtinGroupCRD("gadgets", "tenancy.kcp.io", apiextensionsv1.ClusterScoped, "v1alpha1"),
		// A new version of a kcp group.
		builtinGroupCRD("gizmos", "core.kcp.io", apiextensionsv1.NamespaceScoped, "v1"),
	}
	// The name of a built-in resource, in a new version: refused.
	refused := builtinGroupCRD("leases", "coordination.k8s.io", apiextensionsv1.NamespaceScoped, "v2")
	for _, crd := range append(served, refused) {
		createCRD(t, s, a, crd)
	}
	for _, crd := range served {
		waitForCRD(t, s, a, crd.Name, "Established", established)
	}
	got := waitForCRD(t, s, a, refused.Name, "refused", func(c *apiextensionsv1.CustomResourceDefinition) bool {
		return apiextensionshelpers.IsCRDConditionFalse(c, apiextensionsv1.NamesAccepted)
	})
	// Plural, singular, kind and list kind conflict; the last is reported.
	if cond := apiextensionshelpers.FindCRDCondition(got, apiextensionsv1.NamesAccepted); cond.Reason != "ListKindConflict" ||
		cond.Message != `"LeaseList" is already in use by a built-in API of the group` {
		t.Errorf("NamesAccepted of %s = %s: %s", refused.Name, cond.Reason, cond.Message)
	}
	if cond := crdCondition(got, apiextensionsv1.Established); cond != "False/NotAccepted" {
		t.Errorf("Established of %s = %s", refused.Name, cond)
	}

	ballotsV1 := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "ballots"}
	ballotsV2 := ballotsV1.GroupResource().WithVersion("v2alpha1")
	gadgets := schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "gadgets"}
	gizmos := schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1", Resource: "gizmos"}
	leasesV2 := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v2", Resource: "leases"}
	crdResources := []schema.GroupVersionResource{ballotsV1, ballotsV2, gadgets, gizmos}

	client := dynamicFor(t, s, a)
	createObject(t, client, ballotsV1, "Ballot", "default", "first")
	createObject(t, client, gadgets, "Gadget", "", "one")
	createObject(t, client, gizmos, "Gizmo", "default", "small")
	if got, err := client.Resource(ballotsV2).Namespace("default").Get(t.Context(), "first", metav1.GetOptions{}); err != nil || got.GetAPIVersion() != "coordination.k8s.io/v2alpha1" {
		t.Errorf("the ballot in v2alpha1: %v %v", got, err)
	}

	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("every resource advertised answers a list (legacy discovery %v)", legacy), func(t *testing.T) {
			for _, c := range []logicalcluster.Name{a, b} {
				resources := advertised(t, s, c, legacy)
				has := map[schema.GroupVersionResource]bool{}
				for _, r := range resources {
					has[r.gvr] = true
					if _, err := dynamicFor(t, s, c).Resource(r.gvr).List(t.Context(), metav1.ListOptions{Limit: 1}); err != nil {
						t.Errorf("%s advertises %s, but a list gets: %v", c, r, err)
					}
				}
				for _, gvr := range crdResources {
					if want := c == a; has[gvr] != want {
						t.Errorf("%s advertises %s = %v, want %v", c, gvr, has[gvr], want)
					}
				}
				if has[leasesV2] {
					t.Errorf("%s advertises the refused %s", c, leasesV2)
				}
				if len(resources) < 20 {
					t.Errorf("%s advertises only %v", c, resources)
				}
			}
		})
	}

	t.Run("another cluster and refused CRDs are not served", func(t *testing.T) {
		for _, gvr := range crdResources {
			if _, err := dynamicFor(t, s, b).Resource(gvr).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("list of %s in %s: %v, want NotFound", gvr, b, err)
			}
		}
		if _, err := dynamicFor(t, s, b).Resource(ballotsV1).Namespace("default").Get(t.Context(), "first", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get of a's ballot in %s: %v, want NotFound", b, err)
		}
		if _, err := client.Resource(leasesV2).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("list of the refused %s: %v, want NotFound", leasesV2, err)
		}
		for _, p := range []string{"/apis/coordination.k8s.io/v2alpha1", "/apis/core.kcp.io/v1"} {
			if code := getStatus(t, s, b, p); code != http.StatusNotFound {
				t.Errorf("%s in %s: status %d, want 404", p, b, code)
			}
		}
	})

	t.Run("kubectl api-resources then kubectl get each", func(t *testing.T) {
		for _, c := range []logicalcluster.Name{a, b} {
			out := s.MustKubectl(t, c, "api-resources", "--verbs=list", "-o", "name")
			names := strings.Fields(out)
			for _, r := range []string{"ballots.coordination.k8s.io", "gadgets.tenancy.kcp.io", "gizmos.core.kcp.io"} {
				if want := c == a; slices.Contains(names, r) != want {
					t.Errorf("kubectl api-resources in %s lists %s = %v, want %v:\n%s", c, r, !want, want, out)
				}
			}
			if out, err := s.Kubectl(c, "get", strings.Join(names, ","), "-A", "-o", "name"); err != nil {
				t.Errorf("kubectl get of every resource in %s: %v\n%s", c, err, out)
			}
		}
		out := s.MustKubectl(t, a, "get", "ballots.v2alpha1.coordination.k8s.io,gadgets,gizmos", "-A", "-o", "name")
		for _, want := range []string{"ballot.coordination.k8s.io/first", "gadget.tenancy.kcp.io/one", "gizmo.core.kcp.io/small"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl get in %s lacks %s:\n%s", a, want, out)
			}
		}
		// The built-in resource of the group is untouched.
		s.MustKubectl(t, a, "get", "leases", "-A")
		if out := s.MustKubectl(t, a, "explain", "ballots.spec.size"); !strings.Contains(out, "Size of the ballot.") {
			t.Errorf("kubectl explain ballots.spec.size:\n%s", out)
		}
		if out, err := s.Kubectl(b, "explain", "ballots"); err == nil {
			t.Errorf("kubectl explain ballots in %s succeeds:\n%s", b, out)
		}
	})

	t.Run("OpenAPI v2 has the CRD resources of built-in group versions", func(t *testing.T) {
		body := getBody(t, s, a, "/openapi/v2", "application/json")
		var sw spec.Swagger
		if err := json.Unmarshal(body, &sw); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/apis/coordination.k8s.io/v1/namespaces/{namespace}/ballots", "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", "/apis/tenancy.kcp.io/v1alpha1/gadgets"} {
			if _, ok := sw.Paths.Paths[p]; !ok {
				t.Errorf("OpenAPI v2 of %s lacks %s", a, p)
			}
		}
		proto := getBody(t, s, a, "/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
		t.Logf("OpenAPI v2 document of a cluster with CRDs: %d bytes of JSON, %d of protobuf", len(body), len(proto))
	})

	// The shard builds the built-in v2 document on its first request;
	// what it holds is what k8s.io/apiserver builds, less the gated kcp
	// groups, which only clusters that bind them have.
	t.Run("OpenAPI v2 of a plain cluster: the built-in APIs, no gated group", func(t *testing.T) {
		body := getBody(t, s, b, "/openapi/v2", "application/json")
		var sw spec.Swagger
		if err := json.Unmarshal(body, &sw); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/api/v1/namespaces/{namespace}/configmaps", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "/apis/apis.kcp.io/v1alpha1/apibindings"} {
			if _, ok := sw.Paths.Paths[p]; !ok {
				t.Errorf("OpenAPI v2 of %s lacks %s", b, p)
			}
		}
		for p := range sw.Paths.Paths {
			if strings.HasPrefix(p, "/apis/tenancy.kcp.io/") || strings.HasPrefix(p, "/apis/topology.kcp.io/") {
				t.Errorf("OpenAPI v2 of %s has the gated %s", b, p)
			}
		}
		if _, ok := sw.Definitions["io.k8s.api.core.v1.ConfigMap"]; !ok {
			t.Errorf("OpenAPI v2 of %s lacks the definition of ConfigMap", b)
		}
		if proto := getBody(t, s, b, "/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"); len(proto) == 0 {
			t.Errorf("OpenAPI v2 of %s in protobuf is empty", b)
		}
	})
}

// getStatus GETs a path of a cluster as the shard admin and returns the
// status code.
func getStatus(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, path string) int {
	t.Helper()
	resp, _ := getResponse(t, s, cluster, path, "application/json")
	return resp.StatusCode
}

// getBody GETs a path of a cluster as the shard admin and fails unless the
// answer is 200.
func getBody(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, path, accept string) []byte {
	t.Helper()
	resp, body := getResponse(t, s, cluster, path, accept)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s in %s: status %d: %s", path, cluster, resp.StatusCode, body)
	}
	return body
}

func getResponse(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, path, accept string) (*http.Response, []byte) {
	t.Helper()
	cfg := s.Config(cluster)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := httpClient(t, cfg).Do(req)
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
