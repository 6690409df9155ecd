package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// widgetsSchema is the seed's APIResourceSchema (concepts/apis-in-kcp),
// with a schema in full and kcp's current group apis.kcp.io.
const widgetsSchema = `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata:
  name: v220801.widgets.example.kcp.dev
spec:
  group: example.kcp.dev
  names:
    categories:
    - kcp
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Cluster
  versions:
  - additionalPrinterColumns:
    - description: The current phase
      jsonPath: .status.phase
      name: Phase
      type: string
    - jsonPath: .metadata.creationTimestamp
      name: Age
      type: date
    name: v1alpha1
    schema:
      description: A widget
      type: object
      properties:
        spec:
          type: object
          properties:
            size:
              type: integer
              default: 1
        status:
          type: object
          properties:
            phase:
              type: string
    served: true
    storage: true
    subresources:
      status: {}
`

// TestAPIResourceSchemas: a provider applies the seed's schema with
// kubectl and reads it back; a schema Kubernetes would refuse as a CRD is
// refused with the field at fault, and a schema cannot change.
func TestAPIResourceSchemas(t *testing.T) {
	s := framework.StartShard(t)
	c := logicalcluster.Name("provider")
	createCluster(t, s, c)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	out := s.MustKubectl(t, c, "apply", "-f", write("schema.yaml", widgetsSchema))
	if !strings.Contains(out, "apiresourceschema.apis.kcp.io/v220801.widgets.example.kcp.dev created") {
		t.Errorf("kubectl apply: %s", out)
	}
	out = s.MustKubectl(t, c, "get", "apiresourceschemas")
	if !strings.Contains(out, "v220801.widgets.example.kcp.dev") {
		t.Errorf("kubectl get apiresourceschemas:\n%s", out)
	}
	out = s.MustKubectl(t, c, "get", "apiresourceschema", "v220801.widgets.example.kcp.dev", "-o", "jsonpath={.spec.versions[0].schema.properties.spec.properties.size.default}")
	if out != "1" {
		t.Errorf("the stored schema's default: %q", out)
	}

	badName := strings.Replace(widgetsSchema, "name: v220801.widgets.example.kcp.dev", "name: widgets.example.kcp.dev", 1)
	out, err := s.Kubectl(c, "apply", "-f", write("bad-name.yaml", badName))
	if err == nil || !strings.Contains(out, "metadata.name") || !strings.Contains(out, "must end in .widgets.example.kcp.dev") {
		t.Errorf("a schema named like a CRD: %v\n%s", err, out)
	}
	notStructural := strings.Replace(strings.Replace(widgetsSchema, "v220801.", "v2.", 1), "              type: integer\n", "", 1)
	out, err = s.Kubectl(c, "apply", "-f", write("not-structural.yaml", notStructural))
	if err == nil || !strings.Contains(out, "spec.versions[0].schema.properties[spec].properties[size].type") {
		t.Errorf("a schema that is not structural: %v\n%s", err, out)
	}

	changed := strings.Replace(widgetsSchema, "default: 1", "default: 2", 1)
	out, err = s.Kubectl(c, "apply", "-f", write("changed.yaml", changed))
	if err == nil || !strings.Contains(out, "immutable") {
		t.Errorf("changing a schema: %v\n%s", err, out)
	}
	s.MustKubectl(t, c, "label", "apiresourceschema", "v220801.widgets.example.kcp.dev", "team=west")
}

// cowboysCRD is the CRD a provider starts from (the seed's quickstart).
const cowboysCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cowboys.wildwest.dev
spec:
  group: wildwest.dev
  names:
    kind: Cowboy
    listKind: CowboyList
    plural: cowboys
    singular: cowboy
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              intent:
                type: string
          status:
            type: object
            properties:
              result:
                type: string
    subresources:
      status: {}
`

// TestCRDSnapshot: the provider turns its CRD into an APIResourceSchema
// with the real kubectl and Tessera's kubectl kcp plugin, and applies it.
func TestCRDSnapshot(t *testing.T) {
	s := framework.StartShard(t)
	c := logicalcluster.Name("cowboys-service")
	createCluster(t, s, c)
	bin := t.TempDir()
	kcpPlugin(t, bin)
	crd := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(crd, []byte(cowboysCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	snapshot := exec.Command(framework.KubectlPath(t), "kcp", "crd", "snapshot", "-f", crd, "--prefix", "v220920-6039d110")
	snapshot.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	schema, err := snapshot.Output()
	if err != nil {
		t.Fatalf("kubectl kcp crd snapshot: %v", err)
	}
	path := filepath.Join(t.TempDir(), "schema.yaml")
	if err := os.WriteFile(path, schema, 0o600); err != nil {
		t.Fatal(err)
	}
	out := s.MustKubectl(t, c, "apply", "-f", path)
	if !strings.Contains(out, "apiresourceschema.apis.kcp.io/v220920-6039d110.cowboys.wildwest.dev created") {
		t.Errorf("applying the snapshot: %s\n%s", out, schema)
	}
	got := s.MustKubectl(t, c, "get", "apiresourceschema", "v220920-6039d110.cowboys.wildwest.dev",
		"-o", "jsonpath={.spec.names.kind} {.spec.scope} {.spec.versions[0].name} {.spec.versions[0].schema.properties.spec.properties.intent.type}")
	if got != "Cowboy Namespaced v1alpha1 string" {
		t.Errorf("the applied schema: %q", got)
	}
}
