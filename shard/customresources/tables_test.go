package customresources

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// columnNames returns the names of a table's columns, those kubectl shows
// only with -o wide marked so.
func columnNames(table *metav1.Table) []string {
	names := make([]string, len(table.ColumnDefinitions))
	for i, c := range table.ColumnDefinitions {
		names[i] = c.Name
		if c.Priority > 0 {
			names[i] += " (wide)"
		}
	}
	return names
}

func TestKubernetesKindTable(t *testing.T) {
	created := time.Now().Add(-3 * time.Hour).UTC().Format(time.RFC3339)
	deployment := func(name string, replicas, ready int64) map[string]any {
		return map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": "default", "creationTimestamp": created},
			"spec": map[string]any{
				"replicas": replicas,
				"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "main", "image": "kuard"},
					map[string]any{"name": "log", "image": "fluentd"},
				}}},
			},
			"status": map[string]any{"replicas": replicas, "readyReplicas": ready, "updatedReplicas": replicas, "availableReplicas": ready},
		}
	}
	// The version's own columns, which Deployments do not use.
	v := &apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Ready", Type: "string", JSONPath: ".status.readyReplicas"},
	}}
	convertor, err := tableConvertor(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, v)
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": map[string]any{"resourceVersion": "42"}}}
	list.Items = []unstructured.Unstructured{{Object: deployment("kuard", 3, 1)}, {Object: deployment("web", 2, 2)}}
	table, err := convertor.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Name", "Ready", "Up-to-date", "Available", "Age", "Containers (wide)", "Images (wide)", "Selector (wide)"}, columnNames(table)); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	want := [][]any{
		{"kuard", "1/3", int64(3), int64(1), "3h", "main,log", "kuard,fluentd", "app=kuard"},
		{"web", "2/2", int64(2), int64(2), "3h", "main,log", "kuard,fluentd", "app=web"},
	}
	if len(table.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(table.Rows), len(want))
	}
	for i, row := range table.Rows {
		if diff := cmp.Diff(want[i], row.Cells); diff != "" {
			t.Errorf("row %d (-want +got):\n%s", i, diff)
		}
		// Rows carry the stored, unstructured objects.
		if u, ok := row.Object.Object.(*unstructured.Unstructured); !ok || u != &list.Items[i] {
			t.Errorf("row %d carries %T, not the listed object", i, row.Object.Object)
		}
	}
	if table.ResourceVersion != "42" {
		t.Errorf("resourceVersion %q, want 42", table.ResourceVersion)
	}

	one, err := convertor.ConvertToTable(t.Context(), &list.Items[0], &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.ColumnDefinitions) != 0 || len(one.Rows) != 1 || one.Rows[0].Cells[1] != "1/3" {
		t.Errorf("single object without headers: %+v", one)
	}
}

func TestCustomResourceKeepsPrinterColumns(t *testing.T) {
	v := &apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Ready", Type: "string", JSONPath: ".status.readyReplicas"},
	}}
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "a"},
			"spec":     map[string]any{"replicas": int64(3)},
			"status":   map[string]any{"readyReplicas": int64(1)},
		}}
	}
	for _, kind := range []schema.GroupVersionKind{
		{Group: "wildwest.dev", Version: "v1alpha1", Kind: "Cowboy"},
		// Kubernetes kinds that the compute service does not serve keep
		// their columns too.
		{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "apps", Version: "v1beta1", Kind: "Deployment"},
	} {
		t.Run(kind.String(), func(t *testing.T) {
			convertor, err := tableConvertor(kind, v)
			if err != nil {
				t.Fatal(err)
			}
			table, err := convertor.ConvertToTable(t.Context(), obj(kind.GroupVersion().String(), kind.Kind), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"Name", "Ready"}, columnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]any{"a", "1"}, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
