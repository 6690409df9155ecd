package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestKubernetesTables: a workspace that binds root:compute's APIExport
// kubernetes gets Deployments as custom resources, yet the
// real kubectl prints them as it does from a Kubernetes cluster: READY of
// a Deployment is ready/desired, -o wide adds CONTAINERS IMAGES SELECTOR.
func TestKubernetesTables(t *testing.T) {
	s := framework.StartShard(t, func(o *options.Options) { o.BatteriesIncluded = []string{options.BatteryRootComputeWorkspace} })
	waitComputeBattery(t, s)
	app := logicalcluster.Name("app")
	createCluster(t, s, app)
	createBinding(t, s, app, "kubernetes", "root:compute", "kubernetes")
	waitBound(t, s, app, "kubernetes")

	eventually(t, 30*time.Second, "kubectl create deployment", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl(app, "create", "deployment", "kuard", "--image=x")
		if err != nil {
			return false, fmt.Errorf("%w: %s", err, out)
		}
		return true, nil
	})
	// The status a syncer would report from the physical cluster.
	deployments := dynamicClient(t, s, app).Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("default")
	eventually(t, 30*time.Second, "the Deployment's status", func(ctx context.Context) (bool, error) {
		d, err := deployments.Get(ctx, "kuard", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if err := unstructured.SetNestedMap(d.Object, map[string]any{
			"observedGeneration": d.GetGeneration(),
			"replicas":           int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1),
		}, "status"); err != nil {
			return false, err
		}
		_, err = deployments.UpdateStatus(ctx, d, metav1.UpdateOptions{})
		return err == nil, err
	})

	header, rows := kubectlTable(t, s, app, "get", "deployments")
	if want := "NAME READY UP-TO-DATE AVAILABLE AGE"; header != want {
		t.Errorf("kubectl get deployments header %q, want %q", header, want)
	}
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "kuard 1/1 1 1 ") {
		t.Errorf("kubectl get deployments rows: %q", rows)
	}
	header, rows = kubectlTable(t, s, app, "get", "deployments", "-o", "wide")
	if want := "NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR"; header != want {
		t.Errorf("kubectl get deployments -o wide header %q, want %q", header, want)
	}
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "kuard 1/1 1 1 ") || !strings.HasSuffix(rows[0], " x x app=kuard") {
		t.Errorf("kubectl get deployments -o wide rows: %q", rows)
	}
}

// kubectlTable runs kubectl in cluster and returns the header and the rows
// of the table it prints, each with its fields separated by one space.
func kubectlTable(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, args ...string) (header string, rows []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(s.MustKubectl(t, cluster, args...)), "\n")
	for i, line := range lines {
		lines[i] = strings.Join(strings.Fields(line), " ")
	}
	return lines[0], lines[1:]
}
