package discovery

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kubectl runs the kubectl on PATH against one logical cluster of s, with
// its own discovery and HTTP cache, and returns its combined output.
func kubectl(t *testing.T, s *testServer, cluster string, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		bin = "kubectl"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		t.Skipf("no kubectl to run: %v", err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: shard
  cluster:
    server: %s/clusters/%s
contexts:
- name: shard
  context:
    cluster: shard
current-context: shard
`, s.URL, cluster)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), path, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestKubectl checks what a kubectl user sees in two clusters with different
// CRDs: api-resources from aggregated discovery, and explain from OpenAPI v3
// and v2. It runs the kubectl on PATH (or $KUBECTL) and is skipped without
// one.
func TestKubectl(t *testing.T) {
	s := startTestServer(t, nil)
	s.CRDs.set("a", newCRD("example.com", "Widget", withNames([]string{"wd"}, []string{"all"})))
	s.CRDs.set("b", newCRD("other.io", "Gizmo", clusterScoped))

	for _, tc := range []struct {
		name    string
		cluster string
		args    []string
		want    []string
		notWant []string
		wantErr bool
	}{
		{
			name: "api-resources in a", cluster: "a", args: []string{"api-resources"},
			want:    []string{"widgets", "wd", "example.com/v1", "Widget", "configmaps", "leases", "customresourcedefinitions"},
			notWant: []string{"gizmos"},
		},
		{
			name: "api-resources in b", cluster: "b", args: []string{"api-resources"},
			want:    []string{"gizmos", "other.io/v1", "configmaps"},
			notWant: []string{"widgets"},
		},
		{
			name: "explain a CRD", cluster: "a", args: []string{"explain", "widgets"},
			want: []string{"GROUP:      example.com", "KIND:       Widget", "VERSION:    v1", "A v1 test object.", "spec\t<Object>"},
		},
		{
			name: "explain a CRD field", cluster: "a", args: []string{"explain", "widgets.spec.size"},
			want: []string{"FIELD: size <integer>", "Size is how large the object is."},
		},
		{
			name: "explain a built-in type", cluster: "a", args: []string{"explain", "configmaps"},
			want: []string{"KIND:       ConfigMap", "ConfigMap holds configuration data"},
		},
		{
			name: "explain a CRD with OpenAPI v2", cluster: "a", args: []string{"explain", "widgets.spec", "--output=plaintext-openapiv2"},
			want: []string{"KIND:     Widget", "size\t<integer>"},
		},
		{
			name: "explain a CRD of another cluster", cluster: "b", args: []string{"explain", "widgets"},
			want: []string{`the server doesn't have a resource type "widgets"`}, wantErr: true,
		},
		{
			name: "get a CRD group of another cluster", cluster: "b", args: []string{"get", "--raw", "/apis/example.com/v1"},
			want: []string{"NotFound"}, wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := kubectl(t, s, tc.cluster, tc.args...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("kubectl %s: err = %v, wantErr %v\n%s", strings.Join(tc.args, " "), err, tc.wantErr, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("kubectl %s: output lacks %q:\n%s", strings.Join(tc.args, " "), w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("kubectl %s: output has %q:\n%s", strings.Join(tc.args, " "), w, out)
				}
			}
		})
	}
}
