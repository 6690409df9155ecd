package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// auditEvents reads the audit log, one JSON event a line.
func auditEvents(t *testing.T, path string) []auditLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []auditLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line %q: %v", sc.Text(), err)
		}
		out = append(out, auditLine{Event: ev, raw: sc.Text()})
	}
	return out
}

type auditLine struct {
	auditv1.Event
	raw string
}

// TestAuditLogNamesCluster: with an audit policy and log, every event of a
// request to a logical cluster names that cluster (kcp.io/cluster and
// kcp's older tenancy.kcp.io/workspace), its canonical path when it has
// one, "*" for requests across all clusters; events of a request to one
// cluster never name another, also when authentication fails.
func TestAuditLogNamesCluster(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	s := framework.StartShard(t, func(o *options.Options) {
		o.Audit.PolicyFile = policy
		o.Audit.LogOptions.Path = logPath
	})
	a, b := logicalcluster.Name("audit-a"), logicalcluster.Name("audit-b")
	createCluster(t, s, a)
	createCluster(t, s, b)

	// Each client has its own user agent, which tells its events apart:
	// the request URI in an event no longer holds /clusters/<name>.
	client := func(cluster logicalcluster.Name, agent string) kubernetes.Interface {
		cfg := s.Config(cluster)
		cfg.UserAgent = agent
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := t.Context()
	for cluster, agent := range map[logicalcluster.Name]string{a: "audit-test-a", b: "audit-test-b"} {
		c := client(cluster, agent)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}, Data: map[string]string{"in": string(cluster)}}
		if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "audited", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client(logicalcluster.Wildcard, "audit-test-wildcard").CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client("root", "audit-test-root").CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	// A request to a with a token nobody issued fails authentication.
	bad := rest.AnonymousClientConfig(s.Config(a))
	bad.BearerToken = "not-a-token"
	bad.UserAgent = "audit-test-unauthorized"
	badClient, err := kubernetes.NewForConfig(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := badClient.CoreV1().ConfigMaps("default").Get(ctx, "audited", metav1.GetOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a request with an unknown token: got %v, want 401", err)
	}

	// A failed authentication is audited in one event, at ResponseStarted;
	// other requests end with ResponseComplete.
	want := map[string]struct {
		cluster, path string
		other         logicalcluster.Name
		last          auditv1.Stage
	}{
		"audit-test-a":            {cluster: string(a), other: b, last: auditv1.StageResponseComplete},
		"audit-test-b":            {cluster: string(b), other: a, last: auditv1.StageResponseComplete},
		"audit-test-wildcard":     {cluster: "*", last: auditv1.StageResponseComplete},
		"audit-test-root":         {cluster: "root", path: "root", last: auditv1.StageResponseComplete},
		"audit-test-unauthorized": {cluster: string(a), other: b, last: auditv1.StageResponseStarted},
	}
	// The last stage of a request may be written after its response.
	var events []auditLine
	eventually(t, 30*time.Second, "the audit events of every request", func(context.Context) (bool, error) {
		events = auditEvents(t, logPath)
		done := map[string]bool{}
		for _, ev := range events {
			if w, ok := want[ev.UserAgent]; ok && ev.Stage == w.last {
				done[ev.UserAgent] = true
			}
		}
		for agent := range want {
			if !done[agent] {
				return false, fmt.Errorf("no %s event of the requests by %s yet", want[agent].last, agent)
			}
		}
		return true, nil
	})

	seen := map[string]int{}
	var createdIn []string
	for _, ev := range events {
		w, ok := want[ev.UserAgent]
		if !ok {
			continue
		}
		seen[ev.UserAgent]++
		if got := ev.Annotations["kcp.io/cluster"]; got != w.cluster {
			t.Errorf("%s %s by %s (%s): kcp.io/cluster = %q, want %q", ev.Verb, ev.RequestURI, ev.UserAgent, ev.Stage, got, w.cluster)
		}
		if got := ev.Annotations["tenancy.kcp.io/workspace"]; got != w.cluster {
			t.Errorf("%s %s by %s (%s): tenancy.kcp.io/workspace = %q, want %q", ev.Verb, ev.RequestURI, ev.UserAgent, ev.Stage, got, w.cluster)
		}
		if got := ev.Annotations["kcp.io/path"]; got != w.path {
			t.Errorf("%s %s by %s (%s): kcp.io/path = %q, want %q", ev.Verb, ev.RequestURI, ev.UserAgent, ev.Stage, got, w.path)
		}
		if w.other != "" && strings.Contains(ev.raw, string(w.other)) {
			t.Errorf("an event of a request to %s names %s: %s", w.cluster, w.other, ev.raw)
		}
		if ev.UserAgent == "audit-test-unauthorized" && ev.ResponseStatus != nil && ev.ResponseStatus.Code != 401 {
			t.Errorf("the request with an unknown token answered %d in the audit log, want 401", ev.ResponseStatus.Code)
		}
		if ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "configmaps" && ev.Stage == auditv1.StageResponseComplete {
			createdIn = append(createdIn, ev.Annotations["kcp.io/cluster"])
		}
	}
	for agent, w := range want {
		// RequestReceived and ResponseComplete of each request, or the one
		// event of a failed authentication.
		if min := map[auditv1.Stage]int{auditv1.StageResponseComplete: 2, auditv1.StageResponseStarted: 1}[w.last]; seen[agent] < min {
			t.Errorf("%d audit events of the requests by %s, want at least %d", seen[agent], agent, min)
		}
	}
	if len(createdIn) != 2 || createdIn[0] == createdIn[1] {
		t.Errorf("ConfigMap creates audited in clusters %v, want one in %s and one in %s", createdIn, a, b)
	}
}
