package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

var logicalClusterGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}

// createCluster creates a logical cluster on the shard as the shard admin.
func createCluster(t *testing.T, s *framework.Shard, name logicalcluster.Name) {
	t.Helper()
	client, err := dynamic.NewForConfig(s.Config(name))
	if err != nil {
		t.Fatal(err)
	}
	lc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1",
		"kind":       "LogicalCluster",
		"metadata":   map[string]any{"name": "cluster"},
	}}
	if _, err := client.Resource(logicalClusterGVR).Create(t.Context(), lc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating logical cluster %s: %v", name, err)
	}
	// Every logical cluster gets a default namespace.
	eventually(t, 30*time.Second, "the default namespace of "+string(name), func(ctx context.Context) (bool, error) {
		_, err := kube(t, s, name).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
}

func kube(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

// withTokens adds a static token file with the given "token,user,uid,groups" lines.
func withTokens(t *testing.T, lines ...string) framework.Option {
	p := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(o *options.Options) { o.Authentication.TokenAuthFile = p }
}
