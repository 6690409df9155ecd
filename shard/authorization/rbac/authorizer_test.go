package rbac

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

var (
	readPods    = rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	readSecrets = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}
	everything  = rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}
	access      = rbacv1.PolicyRule{Verbs: []string{"access"}, NonResourceURLs: []string{"/"}}
)

// policy is the RBAC of a small shard: clusters a and b, and system:admin
// with the bootstrap roles.
func policy(t testing.TB) *IndexerStore {
	return newStore(t,
		clusterRole(logicalcluster.SystemAdmin, "cluster-admin", everything, rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}),
		clusterRole(logicalcluster.SystemAdmin, "system:kcp:workspace:access", access),
		clusterRole(logicalcluster.SystemAdmin, "pod-reader", readSecrets), // shadowed in a
		clusterRoleBinding(logicalcluster.SystemAdmin, "masters", "cluster-admin", groupSubject("system:masters")),

		clusterRole("a", "pod-reader", readPods),
		role("a", "ns", "secret-reader", readSecrets),
		clusterRoleBinding("a", "alice-access", "system:kcp:workspace:access", userSubject("alice")),
		clusterRoleBinding("a", "readers", "pod-reader", groupSubject("readers")),
		roleBinding("a", "ns", "alice-secrets", "Role", "secret-reader", userSubject("alice")),
		roleBinding("a", "ns", "bob-admin", "ClusterRole", "cluster-admin", userSubject("bob")),
		roleBinding("a", "ns", "dangling", "Role", "missing", userSubject("carol")),
		roleBinding("a", "ns", "sa", "ClusterRole", "pod-reader", rbacv1.Subject{Kind: "ServiceAccount", Name: "builder"}),

		clusterRoleBinding("b", "bob-admin", "cluster-admin", userSubject("bob")),
	)
}

func inCluster(cluster logicalcluster.Name) context.Context {
	return logicalcluster.WithName(context.Background(), cluster)
}

func TestAuthorizer(t *testing.T) {
	local := New(NewResolver(policy(t), logicalcluster.SystemAdmin), RequestCluster)
	as := func(name string, groups ...string) user.Info { return &user.DefaultInfo{Name: name, Groups: groups} }
	res := func(u user.Info, verb, resource, namespace, name string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, Resource: resource, Namespace: namespace, Name: name, ResourceRequest: true}
	}
	for _, tc := range []struct {
		name    string
		cluster logicalcluster.Name
		attrs   authorizer.AttributesRecord
		want    authorizer.Decision
		reason  string
	}{
		{"ClusterRoleBinding to a group, local ClusterRole", "a", res(as("zed", "readers"), "list", "pods", "", ""),
			authorizer.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "readers" of ClusterRole "pod-reader" to Group "readers"`},
		{"the local ClusterRole shadows the bootstrap one", "a", res(as("zed", "readers"), "get", "secrets", "ns", "s"),
			authorizer.DecisionNoOpinion, ""},
		{"RoleBinding to a Role in its namespace", "a", res(as("alice"), "get", "secrets", "ns", "s"),
			authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "alice-secrets/ns" of Role "secret-reader" to User "alice"`},
		{"RoleBinding does not reach other namespaces", "a", res(as("alice"), "get", "secrets", "other", "s"),
			authorizer.DecisionNoOpinion, ""},
		{"RoleBinding does not reach cluster-wide requests", "a", res(as("alice"), "get", "secrets", "", "s"),
			authorizer.DecisionNoOpinion, ""},
		{"RoleBinding to a bootstrap ClusterRole", "a", res(as("bob"), "delete", "configmaps", "ns", "c"),
			authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "bob-admin/ns" of ClusterRole "cluster-admin" to User "bob"`},
		{"service account subject defaulted to the binding namespace", "a", res(as("system:serviceaccount:ns:builder"), "get", "pods", "ns", "p"),
			authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "sa/ns" of ClusterRole "pod-reader" to ServiceAccount "builder/ns"`},
		{"access via the bootstrap ClusterRole", "a", authorizer.AttributesRecord{User: as("alice"), Verb: "access", Path: "/"},
			authorizer.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "alice-access" of ClusterRole "system:kcp:workspace:access" to User "alice"`},
		{"bindings of a do not count in b", "b", res(as("alice"), "get", "secrets", "ns", "s"), authorizer.DecisionNoOpinion, ""},
		{"admin in b", "b", res(as("bob"), "delete", "secrets", "ns", "s"),
			authorizer.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "bob-admin" of ClusterRole "cluster-admin" to User "bob"`},
		{"a dangling binding is a reason, not an error", "a", res(as("carol"), "get", "pods", "ns", "p"),
			authorizer.DecisionNoOpinion, `RBAC: role.rbac.authorization.k8s.io "missing" not found`},
		{"unknown cluster", "nowhere", res(as("bob"), "get", "pods", "ns", "p"), authorizer.DecisionNoOpinion, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := local.Authorize(inCluster(tc.cluster), tc.attrs)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if d != tc.want || reason != tc.reason {
				t.Errorf("got %v %q, want %v %q", d, reason, tc.want, tc.reason)
			}
			if allows := local.AllowsIn(tc.cluster, tc.attrs); allows != (tc.want == authorizer.DecisionAllow) {
				t.Errorf("AllowsIn = %v", allows)
			}
		})
	}

	t.Run("bootstrap policy reads system:admin whatever the request's cluster", func(t *testing.T) {
		bootstrap := New(NewResolver(policy(t), logicalcluster.SystemAdmin), FixedCluster(logicalcluster.SystemAdmin))
		d, reason, _ := bootstrap.Authorize(inCluster("a"), res(as("x", "system:masters"), "get", "pods", "", ""))
		if d != authorizer.DecisionAllow || !strings.Contains(reason, `Group "system:masters"`) {
			t.Errorf("got %v %q", d, reason)
		}
		if d, _, _ := bootstrap.Authorize(inCluster("b"), res(as("bob"), "get", "pods", "", "")); d != authorizer.DecisionNoOpinion {
			t.Errorf("bob in the bootstrap policy: %v", d)
		}
	})

	t.Run("wildcard requests have no local policy", func(t *testing.T) {
		ctx := logicalcluster.WithCluster(context.Background(), logicalcluster.Cluster{Wildcard: true})
		if d, _, _ := local.Authorize(ctx, res(as("bob"), "list", "pods", "", "")); d != authorizer.DecisionNoOpinion {
			t.Errorf("got %v", d)
		}
	})
}

func TestRulesFor(t *testing.T) {
	local := New(NewResolver(policy(t), logicalcluster.SystemAdmin), RequestCluster)
	res, nonRes, incomplete, err := local.RulesFor(inCluster("a"), &user.DefaultInfo{Name: "alice", Groups: []string{"readers"}}, "ns")
	if err != nil || incomplete {
		t.Fatalf("err %v, incomplete %v", err, incomplete)
	}
	var got []string
	for _, r := range res {
		got = append(got, strings.Join(r.GetVerbs(), ",")+" "+strings.Join(r.GetResources(), ","))
	}
	for _, r := range nonRes {
		got = append(got, strings.Join(r.GetVerbs(), ",")+" "+strings.Join(r.GetNonResourceURLs(), ","))
	}
	want := []string{"get,list pods", "get secrets", "access /"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}

	_, _, _, err = local.RulesFor(inCluster("a"), &user.DefaultInfo{Name: "carol"}, "ns")
	if err == nil {
		t.Error("a dangling binding did not show in the error")
	}
}

func TestRoleRefRules(t *testing.T) {
	r := NewResolver(policy(t), logicalcluster.SystemAdmin)
	for _, tc := range []struct {
		name      string
		cluster   logicalcluster.Name
		ref       rbacv1.RoleRef
		namespace string
		want      []rbacv1.PolicyRule
		wantErr   bool
	}{
		{"local ClusterRole", "a", rbacv1.RoleRef{Kind: "ClusterRole", Name: "pod-reader"}, "", []rbacv1.PolicyRule{readPods}, false},
		{"bootstrap ClusterRole", "b", rbacv1.RoleRef{Kind: "ClusterRole", Name: "pod-reader"}, "", []rbacv1.PolicyRule{readSecrets}, false},
		{"Role", "a", rbacv1.RoleRef{Kind: "Role", Name: "secret-reader"}, "ns", []rbacv1.PolicyRule{readSecrets}, false},
		{"Roles do not fall back", "b", rbacv1.RoleRef{Kind: "Role", Name: "secret-reader"}, "ns", nil, true},
		{"missing", "a", rbacv1.RoleRef{Kind: "ClusterRole", Name: "missing"}, "", nil, true},
		{"unknown kind", "a", rbacv1.RoleRef{Kind: "Policy", Name: "x"}, "", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.RoleRefRules(tc.cluster, tc.ref, tc.namespace)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}
