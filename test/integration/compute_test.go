package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

const computeObjects = `apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: kind
  labels:
    region: eu
spec:
  supportedAPIExports:
  - path: root:compute
    export: kubernetes
---
apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: default
spec:
  resource:
    group: workload.kcp.io
    version: v1alpha1
    resource: synctargets
  instanceSelector: {}
  availableSelectorLabels:
  - key: region
    values: [eu, us]
---
apiVersion: scheduling.kcp.io/v1alpha1
kind: Placement
metadata:
  name: default
spec:
  locationResource:
    group: workload.kcp.io
    version: v1alpha1
    resource: synctargets
  locationSelectors:
  - {}
  namespaceSelector: {}
`

const badLocation = `apiVersion: scheduling.kcp.io/v1alpha1
kind: Location
metadata:
  name: bad
spec:
  resource:
    group: apps
    version: v1
    resource: deployments
  availableSelectorLabels:
  - key: "not a label key"
    values: []
`

// TestComputeAPIs: root publishes kcp's transparent multi-cluster APIs as
// the APIExports workload.kcp.io and scheduling.kcp.io; a workspace serves
// SyncTargets, Locations and Placements only once it binds them; kubectl
// shows kcp's printer columns, a Placement starts Pending, the schemas
// refuse what kcp refuses, and scheduling.kcp.io's maximal permission
// policy keeps a workspace's own admin from writing a Placement's status.
func TestComputeAPIs(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "alice-token,alice,alice-uid"))
	root := kcpClient(t, s, logicalcluster.Root)
	for _, name := range []string{"workload.kcp.io", "scheduling.kcp.io"} {
		eventually(t, 30*time.Second, "APIExport root:"+name+" with an identity", func(ctx context.Context) (bool, error) {
			e, err := root.APIExports().Get(ctx, name, metav1.GetOptions{})
			return err == nil && identityHashRE.MatchString(e.Status.IdentityHash), err
		})
	}

	c := logicalcluster.Name("compute")
	createCluster(t, s, c)
	if out, err := s.Kubectl(c, "get", "placements"); err == nil || !strings.Contains(out, `doesn't have a resource type "placements"`) {
		t.Errorf("placements served without a binding: %v\n%s", err, out)
	}
	createBinding(t, s, c, "workload.kcp.io", "root", "workload.kcp.io")
	createBinding(t, s, c, "scheduling.kcp.io", "root", "scheduling.kcp.io")
	waitBound(t, s, c, "workload.kcp.io")
	waitBound(t, s, c, "scheduling.kcp.io")

	var out string
	eventually(t, 30*time.Second, "the compute objects to be created", func(ctx context.Context) (bool, error) {
		var err error
		out, err = s.Kubectl(c, "apply", "-f", yamlFile(t, "compute.yaml", computeObjects))
		return err == nil, nil
	})
	for _, want := range []string{"synctarget.workload.kcp.io/kind created", "location.scheduling.kcp.io/default created", "placement.scheduling.kcp.io/default created"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply: want %q in\n%s", want, out)
		}
	}
	header := strings.Fields(strings.SplitN(s.MustKubectl(t, c, "get", "locations"), "\n", 2)[0])
	if strings.Join(header, " ") != "NAME RESOURCE AVAILABLE INSTANCES LABELS AGE" {
		t.Errorf("kubectl get locations columns: %v", header)
	}
	header = strings.Fields(strings.SplitN(s.MustKubectl(t, c, "get", "synctargets", "-o", "wide"), "\n", 2)[0])
	if strings.Join(header, " ") != "NAME LOCATION READY SYNCED API RESOURCES KEY AGE" {
		t.Errorf("kubectl get synctargets -o wide columns: %v", header)
	}
	if got := s.MustKubectl(t, c, "get", "placement", "default", "-o", "jsonpath={.status.phase}"); got != "Pending" {
		t.Errorf("a new Placement's phase: %q, want Pending", got)
	}
	if got := s.MustKubectl(t, c, "get", "synctarget", "kind", "-o", "jsonpath={.spec.supportedAPIExports[0].path}:{.spec.supportedAPIExports[0].export}"); got != "root:compute:kubernetes" {
		t.Errorf("the SyncTarget's supportedAPIExports: %q", got)
	}

	out, err := s.Kubectl(c, "apply", "-f", yamlFile(t, "bad.yaml", badLocation))
	for _, want := range []string{
		`The Location "bad" is invalid`,
		`spec.resource.group: Unsupported value: "apps"`,
		`spec.resource.resource: Unsupported value: "deployments"`,
		`spec.availableSelectorLabels[0].key: Invalid value: "not a label key"`,
		`spec.availableSelectorLabels[0].values: Invalid value: 0`,
	} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("an invalid Location: want %q in\n%s", want, out)
		}
	}

	// alice is cluster-admin in the workspace: she writes Placements, and
	// only reads their status, as the export's policy says.
	bindClusterRole(t, s, c, "", "alice-admin", "cluster-admin", authzUser("alice"))
	eventuallyAllowed(t, "alice labels the placement", func(ctx context.Context) error {
		_, err := kubectlAs(t, s, c, "alice-token", "label", "placement", "default", "team=a")
		return err
	})
	out, err = kubectlAs(t, s, c, "alice-token", "patch", "placement", "default", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Bound"}}`)
	if err == nil || !strings.Contains(out, "maximal permission policy") {
		t.Errorf("alice wrote a Placement's status: %v\n%s", err, out)
	}
	if got := s.MustKubectl(t, c, "get", "placement", "default", "-o", "jsonpath={.status.phase}"); got != "Pending" {
		t.Errorf("the Placement's phase after alice's attempt: %q", got)
	}
}
