package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [toys]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Size
      type: %s
      jsonPath: .spec.size
    - name: Color
      type: string
      jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: %s
                description: %s
              color:
                type: string
                default: blue
          status:
            type: object
            properties:
              phase:
                type: string
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func widget(name, size string) string {
	return "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: " + name + "\n  namespace: default\nspec:\n  size: " + size + "\n"
}

// TestCRDsPerCluster installs the same CRD with different schemas in two
// logical clusters and drives them with kubectl.
func TestCRDsPerCluster(t *testing.T) {
	s := framework.StartShard(t)
	a, b, c := logicalcluster.Name("crd-a"), logicalcluster.Name("crd-b"), logicalcluster.Name("crd-c")
	for _, n := range []logicalcluster.Name{a, b, c} {
		createCluster(t, s, n)
	}
	s.MustKubectl(t, a, "apply", "-f", writeFile(t, "a.yaml", fmt.Sprintf(widgetsCRD, "integer", "integer", "size in centimetres")))
	s.MustKubectl(t, b, "apply", "-f", writeFile(t, "b.yaml", fmt.Sprintf(widgetsCRD, "string", "string", "size as a word")))
	for _, n := range []logicalcluster.Name{a, b} {
		s.MustKubectl(t, n, "wait", "--for=condition=Established", "--timeout=60s", "crd/widgets.example.com")
	}
	// Discovery may lag the condition by a moment.
	for _, n := range []logicalcluster.Name{a, b} {
		eventually(t, 30*time.Second, "widgets in the discovery of "+string(n), func(ctx context.Context) (bool, error) {
			out, err := s.Kubectl(n, "api-resources", "--api-group=example.com")
			return err == nil && strings.Contains(out, "widgets"), nil
		})
	}

	t.Run("each cluster validates by its own schema", func(t *testing.T) {
		s.MustKubectl(t, a, "apply", "-f", writeFile(t, "w.yaml", widget("w1", "3")))
		if out, err := s.Kubectl(b, "apply", "-f", writeFile(t, "w.yaml", widget("w1", "3"))); err == nil || !strings.Contains(out, "Invalid") {
			t.Errorf("cluster b accepted an integer size: %v\n%s", err, out)
		}
		s.MustKubectl(t, b, "apply", "-f", writeFile(t, "w.yaml", widget("w1", "large")))
		if out, err := s.Kubectl(a, "apply", "-f", writeFile(t, "w2.yaml", widget("w2", "large"))); err == nil || !strings.Contains(out, "Invalid") {
			t.Errorf("cluster a accepted a string size: %v\n%s", err, out)
		}
	})

	t.Run("one object asked for as a PartialObjectMetadataList is refused with 406, as a built-in one is", func(t *testing.T) {
		client := kube(t, s, a)
		if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/api/v1/namespaces/default/configmaps/cm", "/apis/example.com/v1/namespaces/default/widgets/w1", "/apis/example.com/v1/namespaces/default/widgets/w1/status"} {
			err := client.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io").Do(t.Context()).Error()
			if code := apierrors.ReasonForError(err); code != metav1.StatusReasonNotAcceptable {
				t.Errorf("GET %s as a PartialObjectMetadataList: %v (reason %q), want 406 NotAcceptable", path, err, code)
			}
		}
	})

	t.Run("defaulting pruning and printer columns", func(t *testing.T) {
		// kubectl validates strictly by default: an unknown field is refused.
		shaped := widget("w3", "5") + "  shape: round\n"
		if out, err := s.Kubectl(a, "apply", "-f", writeFile(t, "w3.yaml", shaped)); err == nil || !strings.Contains(out, `unknown field "spec.shape"`) {
			t.Errorf("strict field validation: %v\n%s", err, out)
		}
		s.MustKubectl(t, a, "apply", "--validate=false", "-f", writeFile(t, "w3.yaml", shaped))
		out := s.MustKubectl(t, a, "get", "widget", "w3", "-o", "jsonpath={.spec.color},{.spec.shape}")
		if out != "blue," {
			t.Errorf("default and pruning in a: %q, want blue and no shape", out)
		}
		out = s.MustKubectl(t, a, "get", "wd")
		for _, col := range []string{"NAME", "SIZE", "COLOR", "w1", "3", "blue"} {
			if !strings.Contains(out, col) {
				t.Errorf("kubectl get wd in a lacks %q:\n%s", col, out)
			}
		}
		out = s.MustKubectl(t, b, "get", "toys")
		if !strings.Contains(out, "large") {
			t.Errorf("kubectl get toys (category) in b:\n%s", out)
		}
	})

	t.Run("explain follows the cluster's schema", func(t *testing.T) {
		if out := s.MustKubectl(t, a, "explain", "widgets.spec.size"); !strings.Contains(out, "<integer>") || !strings.Contains(out, "centimetres") {
			t.Errorf("explain in a:\n%s", out)
		}
		if out := s.MustKubectl(t, b, "explain", "widgets.spec.size"); !strings.Contains(out, "<string>") || !strings.Contains(out, "as a word") {
			t.Errorf("explain in b:\n%s", out)
		}
	})

	t.Run("a cluster without the CRD does not serve it", func(t *testing.T) {
		if out := s.MustKubectl(t, c, "api-resources"); strings.Contains(out, "widgets") {
			t.Errorf("cluster c lists widgets:\n%s", out)
		}
		if out, err := s.Kubectl(c, "get", "widgets"); err == nil {
			t.Errorf("cluster c serves widgets:\n%s", out)
		}
	})

	t.Run("status subresource", func(t *testing.T) {
		s.MustKubectl(t, a, "patch", "widget", "w1", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Ready"}}`)
		s.MustKubectl(t, a, "patch", "widget", "w1", "--type=merge", "-p", `{"status":{"phase":"Ignored"},"spec":{"size":4}}`)
		if out := s.MustKubectl(t, a, "get", "widget", "w1", "-o", "jsonpath={.status.phase},{.spec.size}"); out != "Ready,4" {
			t.Errorf("status after patches: %q, want Ready,4", out)
		}
	})

	t.Run("deleting the CRD deletes its objects in that cluster only", func(t *testing.T) {
		s.MustKubectl(t, a, "delete", "crd", "widgets.example.com", "--timeout=60s")
		if out, err := s.Kubectl(a, "get", "crd", "widgets.example.com"); err == nil {
			t.Errorf("the CRD is still there:\n%s", out)
		}
		if out := s.MustKubectl(t, b, "get", "widget", "w1", "-o", "jsonpath={.spec.size}"); out != "large" {
			t.Errorf("cluster b's widget after deleting a's CRD: %q", out)
		}
		// Recreating the CRD in a shows no leftover objects.
		s.MustKubectl(t, a, "apply", "-f", writeFile(t, "a.yaml", fmt.Sprintf(widgetsCRD, "integer", "integer", "size")))
		s.MustKubectl(t, a, "wait", "--for=condition=Established", "--timeout=60s", "crd/widgets.example.com")
		eventually(t, 30*time.Second, "widgets served again in a", func(ctx context.Context) (bool, error) {
			out, err := s.Kubectl(a, "get", "widgets", "-o", "name")
			return err == nil && !strings.Contains(out, "widget.example.com/"), nil
		})
	})
}

// TestWebhookConversionIsRefused: a shard does not call tenants' webhooks.
func TestWebhookConversionIsRefused(t *testing.T) {
	s := framework.StartShard(t)
	createCluster(t, s, "hooks")
	crd := fmt.Sprintf(widgetsCRD, "integer", "integer", "size") + `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: ["v1"]
      clientConfig:
        url: https://example.com/convert
`
	out, err := s.Kubectl("hooks", "apply", "-f", writeFile(t, "crd.yaml", crd))
	if err == nil || !strings.Contains(out, "spec.conversion.strategy") || !strings.Contains(out, "Unsupported value") {
		t.Errorf("a CRD with webhook conversion: %v\n%s", err, out)
	}
}
