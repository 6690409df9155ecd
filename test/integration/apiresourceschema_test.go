package integration

import (
	"os"
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
