package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestAuthzKubectlCanI: kubectl auth can-i (and --list) and whoami answer
// per logical cluster, for a user who may enter a and read in its default
// namespace through a group, and who administers b.
func TestAuthzKubectlCanI(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, `bob-token,bob,bob-uid,"devs"`))
	createCluster(t, s, "a")
	createCluster(t, s, "b")
	bindClusterRole(t, s, "a", "", "bob-access", "system:kcp:workspace:access", authzUser("bob"))
	bindClusterRole(t, s, "a", "default", "devs-view", "view", authzGroup("devs"))
	bindClusterRole(t, s, "b", "", "bob-admin", "cluster-admin", authzUser("bob"))

	canI := func(cluster string, args ...string) (string, error) {
		return kubectlAs(t, s, "", "bob-token", append([]string{"--server", s.URL + "/clusters/" + cluster, "auth", "can-i"}, args...)...)
	}
	eventually(t, authzTimeout, "bob may list configmaps in a", func(context.Context) (bool, error) {
		out, err := canI("a", "list", "configmaps", "-n", "default")
		return err == nil && strings.TrimSpace(out) == "yes", nil
	})
	for _, tc := range []struct {
		cluster string
		args    []string
		want    string
	}{
		{"a", []string{"list", "configmaps", "-n", "default"}, "yes"},
		{"a", []string{"create", "configmaps", "-n", "default"}, "no"},
		{"a", []string{"list", "configmaps", "-n", "other"}, "no"},
		{"a", []string{"list", "namespaces", "--all-namespaces"}, "no"},
		{"b", []string{"create", "configmaps", "-n", "default"}, "yes"},
		{"b", []string{"list", "namespaces", "--all-namespaces"}, "yes"},
		{"b", []string{"*", "*"}, "yes"},
	} {
		out, err := canI(tc.cluster, tc.args...)
		// kubectl prints "yes", or "no" with the reason, and exits 1 for
		// "no".
		got, _, _ := strings.Cut(strings.TrimSpace(out), " ")
		if got != tc.want || (err == nil) != (tc.want == "yes") {
			t.Errorf("kubectl auth can-i %s in %s: %q (err %v), want %q", strings.Join(tc.args, " "), tc.cluster, out, err, tc.want)
		}
	}

	listA, err := canI("a", "--list", "-n", "default")
	if err != nil {
		t.Fatalf("kubectl auth can-i --list in a: %v\n%s", err, listA)
	}
	if !strings.Contains(listA, "configmaps") || strings.Contains(listA, "*.*") {
		t.Errorf("kubectl auth can-i --list in a, want view rules and not everything:\n%s", listA)
	}
	listB, err := canI("b", "--list", "-n", "default")
	if err != nil {
		t.Fatalf("kubectl auth can-i --list in b: %v\n%s", err, listB)
	}
	if !strings.Contains(listB, "*.*") {
		t.Errorf("kubectl auth can-i --list in b, want everything:\n%s", listB)
	}

	who, err := kubectlAs(t, s, "a", "bob-token", "auth", "whoami")
	if err != nil || !strings.Contains(who, "bob") || !strings.Contains(who, "devs") {
		t.Errorf("kubectl auth whoami in a: %v\n%s", err, who)
	}

	// The shard admin may do anything anywhere.
	if out, err := s.Kubectl("a", "auth", "can-i", "*", "*"); err != nil || strings.TrimSpace(out) != "yes" {
		t.Errorf("the shard admin in a: %q (err %v)", out, err)
	}
}
