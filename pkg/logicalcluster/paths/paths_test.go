package paths

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func logicalClusterObject(cluster, path string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetName("cluster")
	u.SetAnnotations(map[string]string{"kcp.io/cluster": cluster, logicalcluster.PathAnnotationKey: path})
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
	}
	return u
}

func TestPathIndex(t *testing.T) {
	for name, tc := range map[string]struct {
		obj  any
		want []string
	}{
		"canonical path": {logicalClusterObject("abc", "root:org", false), []string{"root:org"}},
		"deleting":       {logicalClusterObject("abc", "root:org", true), nil},
		"no path":        {logicalClusterObject("abc", "", false), nil},
		"not a logical":  {"x", nil},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := LogicalClusterIndex(tc.obj)
			if err != nil || len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Errorf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	// root (canonical root) has Workspace org -> cluster o1, whose
	// LogicalCluster says root:org; o1 has Workspace team -> t1, whose
	// LogicalCluster lacks a path (not yet annotated); pending has a
	// Workspace not yet scheduled.
	byPath := map[string][]any{
		"root":     {logicalClusterObject("root", "root", false)},
		"root:org": {logicalClusterObject("o1", "root:org", false)},
	}
	workspaces := map[logicalcluster.Name]map[string]string{
		"root": {"org": "o1"},
		"o1":   {"team": "t1", "pending": ""},
	}
	p := Resolver{
		ByCanonicalPath: func(path string) ([]any, error) { return byPath[path], nil },
		Workspace: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
			c, ok := workspaces[cluster][name]
			if !ok {
				return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), name)
			}
			return &tenancyv1alpha1.Workspace{Spec: tenancyv1alpha1.WorkspaceSpec{Cluster: c}}, nil
		},
		Elsewhere: func(path string) (logicalcluster.Name, bool) {
			if path == "root:elsewhere" {
				return "e1", true
			}
			return "", false
		},
	}
	for path, want := range map[string]logicalcluster.Name{
		"root":             "root",
		"root:org":         "o1",
		"root:org:team":    "t1",
		"o1:team":          "t1",
		"t1":               "t1", // a logical cluster name
		"root:org:pending": "",
		"root:org:missing": "",
		"root:nope:team":   "",
		"root:elsewhere":   "e1", // from replicas
	} {
		got, ok := p.Resolve(logicalcluster.NewPath(path))
		if got != want || ok != (want != "") {
			t.Errorf("resolve(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}
