package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// priorityLevelOf returns the UID of the priority level APF served a GET
// of path with (the X-Kubernetes-PF-PriorityLevel-UID response header).
func priorityLevelOf(t *testing.T, cfg *rest.Config, path string) string {
	t.Helper()
	_, header, _ := getPath(t, cfg, path)
	return header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
}

// TestPriorityAndFairnessConfiguration: the shard configures APF in
// system:admin at start; tenants share the tenants level, shard admins are
// exempt, and the configuration cannot be written in a tenant's cluster,
// where it would do nothing.
func TestPriorityAndFairnessConfiguration(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "tenant-token,tenant,tenant-uid"))
	a := logicalcluster.Name("fair-a")
	createCluster(t, s, a)
	bindClusterRole(t, s, a, "", "tenant-admin", "cluster-admin", authzUser("tenant"))
	admin := kube(t, s, logicalcluster.SystemAdmin)
	levels := map[string]string{}
	eventually(t, 30*time.Second, "the default priority levels and flow schemas", func(ctx context.Context) (bool, error) {
		pls, err := admin.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, pl := range pls.Items {
			levels[pl.Name] = string(pl.UID)
		}
		fss, err := admin.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var names []string
		for _, fs := range fss.Items {
			names = append(names, fs.Name)
		}
		return len(levels) == 4 && strings.Join(names, ",") == "catch-all,exempt,probes,tenant-lists,tenants", nil
	})
	tenantCfg := tokenConfig(s, a, "tenant-token")
	eventually(t, 30*time.Second, "a tenant's request to be served at the tenants level", func(context.Context) (bool, error) {
		return priorityLevelOf(t, tenantCfg, "/api/v1/namespaces/default") == levels["tenants"], nil
	})
	if got := priorityLevelOf(t, tenantCfg, "/api/v1/namespaces/default/configmaps"); got != levels["tenant-lists"] {
		t.Errorf("a tenant's list was served at level %q, want tenant-lists (%s)", got, levels["tenant-lists"])
	}
	if got := priorityLevelOf(t, s.Config(a), "/api/v1/namespaces/default/configmaps"); got != levels["exempt"] {
		t.Errorf("a shard admin's request was served at level %q, want exempt (%s)", got, levels["exempt"])
	}

	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "exempt"},
			MatchingPrecedence:         2,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "tenant"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	_, err := kube(t, s, a).FlowcontrolV1().FlowSchemas().Create(t.Context(), fs, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "configured for the whole shard") {
		t.Errorf("creating a FlowSchema in %s: %v, want 422 saying APF is configured in system:admin", a, err)
	}
	list, err := tokenClient(t, s, a, "tenant-token").FlowcontrolV1().FlowSchemas().List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("FlowSchemas a tenant sees in its cluster: %v %v, want none", list, err)
	}
}
