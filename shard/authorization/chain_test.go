package authorization

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/testutil"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/bootstrap"
	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// newStore returns an RBAC store over indexers shaped like the shard's
// informers, holding objs.
func newStore(t testing.TB, objs ...runtime.Object) *rbac.IndexerStore {
	t.Helper()
	withSubjects := informers.ClusterIndexers()
	maps.Copy(withSubjects, rbac.SubjectIndexers())
	roles := cache.NewIndexer(informers.KeyFunc, informers.ClusterIndexers())
	clusterRoles := cache.NewIndexer(informers.KeyFunc, informers.ClusterIndexers())
	roleBindings := cache.NewIndexer(informers.KeyFunc, withSubjects)
	clusterRoleBindings := cache.NewIndexer(informers.KeyFunc, withSubjects)
	for _, obj := range objs {
		var err error
		switch obj.(type) {
		case *rbacv1.Role:
			err = roles.Add(obj)
		case *rbacv1.ClusterRole:
			err = clusterRoles.Add(obj)
		case *rbacv1.RoleBinding:
			err = roleBindings.Add(obj)
		case *rbacv1.ClusterRoleBinding:
			err = clusterRoleBindings.Add(obj)
		default:
			t.Fatalf("unexpected %T", obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return rbac.NewIndexerStore(roles, roleBindings, clusterRoles, clusterRoleBindings)
}

// inCluster puts the RBAC objects into a logical cluster.
func inCluster[T interface {
	runtime.Object
	metav1.Object
}](cluster logicalcluster.Name, obj T) T {
	obj.SetAnnotations(map[string]string{logicalcluster.AnnotationKey: string(cluster)})
	return obj
}

func bindCluster(cluster logicalcluster.Name, name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return inCluster(cluster, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}})
}

func bindNamespace(cluster logicalcluster.Name, namespace, name, role string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return inCluster(cluster, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}})
}

func userSubject(name string) rbacv1.Subject  { return rbacv1.Subject{Kind: "User", Name: name} }
func groupSubject(name string) rbacv1.Subject { return rbacv1.Subject{Kind: "Group", Name: name} }

// shardPolicy is the RBAC of a test shard: the bootstrap policy in
// system:admin, and bindings in clusters a, b, init and guarded.
func shardPolicy(t testing.TB) *rbac.IndexerStore {
	var objs []runtime.Object
	for _, r := range bootstrap.ClusterRoles() {
		objs = append(objs, inCluster(logicalcluster.SystemAdmin, &r))
	}
	for _, b := range bootstrap.ClusterRoleBindings() {
		objs = append(objs, inCluster(logicalcluster.SystemAdmin, &b))
	}
	cmReader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
	secretReader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}}
	objs = append(objs,
		// Bindings of every cluster may refer to it.
		inCluster(logicalcluster.SystemAdmin, cmReader.DeepCopy()),
		bindCluster(logicalcluster.SystemAdmin, "global-access", bootstrap.WorkspaceAccessClusterRole, userSubject("global")),

		bindCluster("a", "alice-access", bootstrap.WorkspaceAccessClusterRole, userSubject("alice")),
		bindCluster("a", "admin", "cluster-admin", userSubject("admin-a")),
		bindNamespace("a", "default", "alice-cm", "configmap-reader", userSubject("alice")),
		bindNamespace("a", "default", "sa-cm", "configmap-reader", rbacv1.Subject{Kind: "ServiceAccount", Name: "builder"}),
		inCluster("a", secretReader.DeepCopy()),
		bindCluster("a", "in-workspace", "secret-reader", groupSubject(WorkspaceAccessGroup)),

		bindCluster("b", "bob-access", bootstrap.WorkspaceAccessClusterRole, userSubject("bob")),

		bindCluster("init", "admin", "cluster-admin", userSubject("admin-init"), userSubject("content-admin")),

		bindCluster("guarded", "access", bootstrap.WorkspaceAccessClusterRole, groupSubject("system:authenticated")),
		bindNamespace("guarded", "default", "cm", "configmap-reader", groupSubject("system:authenticated")),
	)
	return newStore(t, objs...)
}

func states() ClusterStateFunc {
	all := map[logicalcluster.Name]ClusterState{
		logicalcluster.SystemAdmin: {Phase: corev1alpha1.LogicalClusterPhaseReady},
		"a":                        {Phase: corev1alpha1.LogicalClusterPhaseReady},
		"b":                        {Phase: corev1alpha1.LogicalClusterPhaseReady},
		"init":                     {Phase: corev1alpha1.LogicalClusterPhaseInitializing},
		"guarded":                  {Phase: corev1alpha1.LogicalClusterPhaseReady, RequiredGroups: "g1;g2,g3"},
	}
	return func(name logicalcluster.Name) (ClusterState, bool, error) {
		if name == "broken" {
			return ClusterState{}, false, errors.New("cache unavailable")
		}
		st, ok := all[name]
		return st, ok, nil
	}
}

func newChain(t testing.TB, opts ...func(*Config)) *Authorizer {
	t.Helper()
	c := Config{
		Store:        shardPolicy(t),
		ClusterState: states(),
		ContentAdmin: func(_ context.Context, cluster logicalcluster.Name, u user.Info) (bool, error) {
			return cluster == "init" && u.GetName() == "content-admin", nil
		},
	}
	for _, o := range opts {
		o(&c)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func someone(name string, groups ...string) *user.DefaultInfo {
	return &user.DefaultInfo{Name: name, Groups: append([]string{user.AllAuthenticated}, groups...)}
}

func serviceAccountOf(cluster logicalcluster.Name, namespace, name string) *user.DefaultInfo {
	return &user.DefaultInfo{
		Name:   "system:serviceaccount:" + namespace + ":" + name,
		Groups: []string{user.AllAuthenticated, "system:serviceaccounts", "system:serviceaccounts:" + namespace},
		Extra:  map[string][]string{ServiceAccountClusterExtraKey: {string(cluster)}},
	}
}

// scoped returns u with scope values.
func scoped(u *user.DefaultInfo, values ...string) *user.DefaultInfo {
	c := *u
	c.Extra = map[string][]string{"authentication.kcp.io/scopes": values}
	return &c
}

func get(u user.Info, resource, namespace, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: "get", APIVersion: "v1", Resource: resource, Namespace: namespace, Name: name, ResourceRequest: true}
}

func path(u user.Info, verb, p string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: verb, Path: p}
}

func ctxFor(cluster string) context.Context {
	ctx := context.Background()
	switch cluster {
	case "":
		return ctx
	case "*":
		return logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Wildcard: true})
	}
	return logicalcluster.WithName(ctx, logicalcluster.Name(cluster))
}

func TestChain(t *testing.T) {
	a := newChain(t)
	anonymous := &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	master := someone("root", user.SystemPrivilegedGroup)
	for _, tc := range []struct {
		name     string
		cluster  string
		attrs    authorizer.AttributesRecord
		want     authorizer.Decision
		stage    string
		reason   string
		wantsErr bool
	}{
		// public paths and shard admins
		{"health is public", "system:admin", path(anonymous, "get", "/readyz/etcd"), authorizer.DecisionAllow, stagePublic, "public", false},
		{"version is public in any cluster", "nowhere", path(anonymous, "get", "/version"), authorizer.DecisionAllow, stagePublic, "public", false},
		{"a prefix is not a subpath", "a", path(anonymous, "get", "/healthzz"), authorizer.DecisionNoOpinion, stageContent, "", false},
		{"writes to public paths are not public", "a", path(anonymous, "post", "/healthz"), authorizer.DecisionNoOpinion, stageContent, "", false},
		{"masters across all clusters", "*", get(master, "configmaps", "", ""), authorizer.DecisionAllow, stageMasters, "system:masters", false},
		{"masters in a system cluster", "system:admin", get(master, "configmaps", "default", "x"), authorizer.DecisionAllow, stageMasters, "", false},
		{"masters in a cluster that is not ready", "init", get(master, "configmaps", "default", "x"), authorizer.DecisionAllow, stageMasters, "", false},

		// guards
		{"no cluster", "", get(someone("alice"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageGuard, "no logical cluster", false},
		{"wildcard by a non-admin", "*", get(someone("admin-a"), "configmaps", "", ""), authorizer.DecisionDeny, stageGuard, "across all logical clusters", false},
		{"system cluster by a non-admin", "system:admin", get(someone("global"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageGuard, `"system:admin" is a system cluster`, false},
		{"cluster admin cannot impersonate system:masters", "a",
			authorizer.AttributesRecord{User: someone("admin-a"), Verb: "impersonate", Resource: "groups", Name: "system:masters", ResourceRequest: true},
			authorizer.DecisionDeny, stageGuard, "impersonating the system:masters group", false},
		{"cluster admin cannot impersonate a service account's cluster", "a",
			authorizer.AttributesRecord{User: someone("admin-a"), Verb: "impersonate", APIGroup: "authentication.k8s.io", Resource: "userextras", Subresource: ServiceAccountClusterExtraKey, Name: "b", ResourceRequest: true},
			authorizer.DecisionDeny, stageGuard, "user extra", false},
		{"cluster admin cannot impersonate the system's per-request groups", "a",
			authorizer.AttributesRecord{User: someone("admin-a"), Verb: "impersonate", Resource: "groups", Name: WorkspaceAdminGroup, ResourceRequest: true},
			authorizer.DecisionDeny, stageGuard, `impersonating the group "system:kcp:clusterworkspace:admin"`, false},
		{"the initializing workspaces virtual workspace authorizes itself", "system:admin", path(someone("x"), "get", "/services/initializingworkspaces/root:t/clusters/*/apis"),
			authorizer.DecisionAllow, stageVirtual, "themselves", false},
		{"other /services paths are not virtual workspaces", "system:admin", path(someone("x"), "get", "/services/other"),
			authorizer.DecisionDeny, stageGuard, "system cluster", false},
		{"no virtual workspace inside a logical cluster", "a", path(someone("mallory"), "get", "/services/initializingworkspaces/root:t/clusters/*/apis"),
			authorizer.DecisionNoOpinion, stageContent, "", false},
		{"the workspace admin group enters an initializing cluster", "init", path(someone("initializer", WorkspaceAdminGroup), "get", "/api"),
			authorizer.DecisionAllow, stagePolicy, "system:discovery", false},
		{"a cluster admin does not read the shard's metrics", "a", path(someone("admin-a"), "get", "/metrics"),
			authorizer.DecisionDeny, stageGuard, "whole shard", false},
		{"nor its profiles", "a", path(someone("admin-a"), "get", "/debug/pprof/heap"),
			authorizer.DecisionDeny, stageGuard, "whole shard", false},
		{"shard admins read the metrics", "system:admin", path(master, "get", "/metrics"), authorizer.DecisionAllow, stageMasters, "", false},
		{"a cluster admin reads other non-resource paths of its cluster", "a", path(someone("admin-a"), "get", "/metricsz"),
			authorizer.DecisionAllow, stagePolicy, `ClusterRole "cluster-admin"`, false},
		{"cluster admin may impersonate other groups", "a",
			authorizer.AttributesRecord{User: someone("admin-a"), Verb: "impersonate", Resource: "groups", Name: "devs", ResourceRequest: true},
			authorizer.DecisionAllow, stagePolicy, `ClusterRoleBinding "admin"`, false},
		{"cluster admin cannot delete its LogicalCluster", "a",
			authorizer.AttributesRecord{User: someone("admin-a"), Verb: "delete", APIGroup: "core.kcp.io", Resource: "logicalclusters", Name: "cluster", ResourceRequest: true},
			authorizer.DecisionDeny, stageGuard, "LogicalClusters", false},
		{"cluster admin may read its LogicalCluster", "a",
			authorizer.AttributesRecord{User: someone("admin-a"), Verb: "get", APIGroup: "core.kcp.io", Resource: "logicalclusters", Name: "cluster", ResourceRequest: true},
			authorizer.DecisionAllow, stagePolicy, "", false},

		// workspace content
		{"cluster that does not exist", "nowhere", get(someone("global"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageContent, `logical cluster "nowhere" does not exist`, false},
		{"cluster state unknown", "broken", get(someone("global"), "configmaps", "default", "x"), authorizer.DecisionNoOpinion, stageContent, "", true},
		{"cluster admin of an initializing cluster", "init", get(someone("admin-init"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageContent, `"init" is not ready (phase Initializing)`, false},
		{"workspace content admin of an initializing cluster", "init", get(someone("content-admin"), "configmaps", "default", "x"), authorizer.DecisionAllow, stagePolicy, "", false},
		{"service account of an initializing cluster", "init", get(serviceAccountOf("init", "default", "builder"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageContent, "not ready", false},
		{"user without access", "a", get(someone("mallory"), "configmaps", "default", "x"), authorizer.DecisionNoOpinion, stageContent, `no verb=access permission on / in logical cluster "a"`, false},
		{"user bound only in a, in b", "b", get(someone("alice"), "configmaps", "default", "x"), authorizer.DecisionNoOpinion, stageContent, "workspace access not permitted", false},
		{"access granted by the bootstrap policy", "b", path(someone("global"), "get", "/api"), authorizer.DecisionAllow, stagePolicy, `ClusterRoleBinding "system:discovery"`, false},
		{"access granted by the bootstrap policy, RBAC of the cluster decides", "b", get(someone("global"), "configmaps", "default", "x"), authorizer.DecisionNoOpinion, stagePolicy, "", false},
		{"service account of a in a", "a", get(serviceAccountOf("a", "default", "builder"), "configmaps", "default", "x"), authorizer.DecisionAllow, stagePolicy, `RoleBinding "sa-cm/default"`, false},
		{"service account of a in b", "b", get(serviceAccountOf("a", "default", "builder"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageContent, `service account "system:serviceaccount:default:builder" of logical cluster "a" has no access to logical cluster "b"`, false},
		{"service account of a in b, even with a binding in b", "b", get(serviceAccountOf("a", "default", "bob"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageContent, "no access", false},

		// required groups
		{"required groups: second clause", "guarded", get(someone("u", "g3"), "configmaps", "default", "x"), authorizer.DecisionAllow, stagePolicy, "", false},
		{"required groups: first clause", "guarded", get(someone("u", "g1", "g2"), "configmaps", "default", "x"), authorizer.DecisionAllow, stagePolicy, "", false},
		{"required groups: half a clause", "guarded", get(someone("u", "g1"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageRequiredGroups, `requires: g1;g2,g3`, false},
		{"required groups do not bind service accounts", "guarded", get(serviceAccountOf("guarded", "default", "x"), "configmaps", "default", "x"), authorizer.DecisionAllow, stagePolicy, "", false},
		{"required groups before RBAC", "guarded", get(someone("u"), "secrets", "default", "x"), authorizer.DecisionDeny, stageRequiredGroups, "", false},

		// local or bootstrap policy
		{"local RoleBinding", "a", get(someone("alice"), "configmaps", "default", "x"), authorizer.DecisionAllow, stagePolicy, `RBAC: allowed by RoleBinding "alice-cm/default" of ClusterRole "configmap-reader" to User "alice"`, false},
		{"local RoleBinding is limited to its namespace", "a", get(someone("alice"), "configmaps", "other", "x"), authorizer.DecisionNoOpinion, stagePolicy,
			`RBAC: neither the policy of logical cluster "a" nor the bootstrap policy of "system:admin" allows it`, false},
		{"per-request group", "a", get(someone("alice"), "secrets", "default", "x"), authorizer.DecisionAllow, stagePolicy, `to Group "system:kcp:clusterworkspace:access"`, false},
		{"bootstrap discovery", "a", path(someone("alice"), "get", "/apis/apps"), authorizer.DecisionAllow, stagePolicy, `ClusterRoleBinding "system:discovery"`, false},
		{"bootstrap self reviews", "b", authorizer.AttributesRecord{User: someone("bob"), Verb: "create", APIGroup: "authorization.k8s.io", Resource: "selfsubjectrulesreviews", ResourceRequest: true},
			authorizer.DecisionAllow, stagePolicy, `system:basic-user`, false},
		{"cluster admin of a", "a", authorizer.AttributesRecord{User: someone("admin-a"), Verb: "delete", Resource: "secrets", Namespace: "x", Name: "y", ResourceRequest: true},
			authorizer.DecisionAllow, stagePolicy, `ClusterRole "cluster-admin"`, false},
		{"cluster admin of a in b", "b", get(someone("admin-a"), "secrets", "x", "y"), authorizer.DecisionNoOpinion, stageContent, "", false},

		// scopes (authentication.kcp.io/scopes)
		{"cluster admin scoped to a, in a", "a", get(scoped(someone("admin-a"), "cluster:a"), "secrets", "x", "y"), authorizer.DecisionAllow, stagePolicy, `ClusterRole "cluster-admin"`, false},
		{"cluster admin scoped to b, in a, is anonymous", "a", get(scoped(someone("admin-a"), "cluster:b"), "secrets", "x", "y"), authorizer.DecisionNoOpinion, stageContent, "workspace access not permitted", false},
		{"out of scope, a member of system:masters is not one", "a", get(scoped(master, "cluster:b"), "secrets", "x", "y"), authorizer.DecisionNoOpinion, stageContent, "", false},
		{"out of scope, system:authenticated still applies", "guarded", get(scoped(someone("u", "g3"), "cluster:a"), "configmaps", "default", "x"), authorizer.DecisionDeny, stageRequiredGroups, "", false},
		{"scoped users are out of scope across all clusters", "*", get(scoped(master, "cluster:a"), "configmaps", "", ""), authorizer.DecisionDeny, stageGuard, "across all logical clusters", false},
		{"scoped requestor may impersonate in its cluster", "a",
			authorizer.AttributesRecord{User: scoped(someone("admin-a"), "cluster:a"), Verb: "impersonate:user-info", APIGroup: "authentication.k8s.io", Resource: "users", Name: "bob", ResourceRequest: true},
			authorizer.DecisionAllow, stagePolicy, "", false},
		{"nobody but masters impersonates associated nodes", "a",
			authorizer.AttributesRecord{User: someone("admin-a"), Verb: "impersonate:associated-node", APIGroup: "authentication.k8s.io", Resource: "nodes", Name: "*", ResourceRequest: true},
			authorizer.DecisionDeny, stageGuard, "logical clusters have no nodes", false},
		{"nor acts as one", "a", authorizer.AttributesRecord{User: someone("admin-a"), Verb: "impersonate-on:associated-node:list", Resource: "secrets", ResourceRequest: true},
			authorizer.DecisionDeny, stageGuard, "logical clusters have no nodes", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := a.decide(ctxFor(tc.cluster), clusterOf(tc.cluster), tc.cluster != "", tc.attrs)
			if v.decision != tc.want || v.stage != tc.stage || !strings.Contains(v.reason, tc.reason) || (v.err != nil) != tc.wantsErr {
				t.Errorf("got %v at %s: %q (err %v); want %v at %s containing %q (error %v)", v.decision, v.stage, v.reason, v.err, tc.want, tc.stage, tc.reason, tc.wantsErr)
			}
			d, reason, err := a.Authorize(ctxFor(tc.cluster), tc.attrs)
			if d != v.decision || reason != v.reason || (err != nil) != (v.err != nil) {
				t.Errorf("Authorize = %v %q %v, decide = %v %q %v", d, reason, err, v.decision, v.reason, v.err)
			}
		})
	}
}

// TestReasonsNameTheClusterAsAddressed: a request that addressed a cluster
// by its workspace path is refused with that path, never with the name of
// the logical cluster behind it.
func TestReasonsNameTheClusterAsAddressed(t *testing.T) {
	a := newChain(t)
	for _, tc := range []struct {
		name    string
		cluster logicalcluster.Cluster
		attrs   authorizer.AttributesRecord
	}{
		{"no access", logicalcluster.Cluster{Name: "b", Path: "root:victim"}, get(someone("alice"), "configmaps", "default", "x")},
		{"rbac", logicalcluster.Cluster{Name: "b", Path: "root:victim"}, get(someone("bob"), "configmaps", "default", "x")},
		{"not ready", logicalcluster.Cluster{Name: "init", Path: "root:victim"}, get(someone("admin-init"), "configmaps", "default", "x")},
		{"required groups", logicalcluster.Cluster{Name: "guarded", Path: "root:victim"}, get(someone("u"), "configmaps", "default", "x")},
		{"service account", logicalcluster.Cluster{Name: "b", Path: "root:victim"}, get(serviceAccountOf("a", "default", "x"), "configmaps", "default", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, reason, _ := a.Authorize(logicalcluster.WithCluster(context.Background(), tc.cluster), tc.attrs)
			if !strings.Contains(reason, `"root:victim"`) || strings.Contains(reason, `"`+string(tc.cluster.Name)+`"`) {
				t.Errorf("reason %q: want the path root:victim, not the name %s", reason, tc.cluster.Name)
			}
		})
	}
}

func clusterOf(cluster string) logicalcluster.Cluster {
	c, _ := logicalcluster.ClusterFrom(ctxFor(cluster))
	return c
}

func TestMaximalPermissionPolicySlot(t *testing.T) {
	var seen []string
	a := newChain(t, func(c *Config) {
		c.MaximalPermissionPolicy = func(delegate authorizer.Authorizer) authorizer.Authorizer {
			return authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
				seen = append(seen, attrs.GetUser().GetName())
				if attrs.GetResource() == "secrets" {
					return authorizer.DecisionDeny, "exceeds the maximal permission policy", nil
				}
				return delegate.Authorize(ctx, attrs)
			})
		}
	})
	if d, _, _ := a.Authorize(ctxFor("a"), get(someone("alice"), "configmaps", "default", "x")); d != authorizer.DecisionAllow {
		t.Errorf("configmaps: %v", d)
	}
	if d, reason, _ := a.Authorize(ctxFor("a"), get(someone("alice"), "secrets", "default", "x")); d != authorizer.DecisionDeny || reason != "exceeds the maximal permission policy" {
		t.Errorf("secrets: %v %q", d, reason)
	}
	// Only requests that passed the content stage reach it.
	if d, _, _ := a.Authorize(ctxFor("b"), get(someone("alice"), "configmaps", "default", "x")); d != authorizer.DecisionNoOpinion {
		t.Errorf("alice in b: %v", d)
	}
	if len(seen) != 2 {
		t.Errorf("the slot saw %v", seen)
	}
}

func TestRulesFor(t *testing.T) {
	a := newChain(t)
	describe := func(res []authorizer.ResourceRuleInfo, nonRes []authorizer.NonResourceRuleInfo) string {
		var out []string
		for _, r := range res {
			out = append(out, strings.Join(r.GetVerbs(), ",")+" "+strings.Join(r.GetResources(), ","))
		}
		for _, r := range nonRes {
			out = append(out, strings.Join(r.GetVerbs(), ",")+" "+strings.Join(r.GetNonResourceURLs(), ","))
		}
		return strings.Join(out, "\n")
	}
	res, nonRes, incomplete, err := a.RulesFor(ctxFor("a"), someone("alice"), "default")
	if err != nil || incomplete {
		t.Fatalf("err %v incomplete %v", err, incomplete)
	}
	got := describe(res, nonRes)
	for _, want := range []string{
		"get,list configmaps",     // local RoleBinding
		"get secrets",             // through the per-request group
		"selfsubjectrulesreviews", // bootstrap
		"access /",
		"get /api",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rules of alice in a lack %q:\n%s", want, got)
		}
	}
	res, nonRes, _, _ = a.RulesFor(ctxFor("b"), someone("alice"), "default")
	got = describe(res, nonRes)
	if strings.Contains(got, "configmaps") || strings.Contains(got, "secrets") {
		t.Errorf("rules of alice in b include a's:\n%s", got)
	}
	if res, nonRes, _, _ := a.RulesFor(ctxFor("system:admin"), someone("global"), ""); len(res)+len(nonRes) != 0 {
		t.Errorf("a non-admin has rules in system:admin")
	}
	if res, _, _, _ := a.RulesFor(ctxFor("a"), someone("root", user.SystemPrivilegedGroup), ""); !strings.Contains(describe(res, nil), "* *") {
		t.Errorf("system:masters lacks cluster-admin's rules: %s", describe(res, nil))
	}
}

func TestMetrics(t *testing.T) {
	a := newChain(t)
	metric := decisions.WithLabelValues("denied", stageRequiredGroups)
	before, err := testutil.GetCounterMetricValue(metric)
	if err != nil {
		t.Fatal(err)
	}
	a.Authorize(ctxFor("guarded"), get(someone("u"), "configmaps", "default", "x"))
	after, _ := testutil.GetCounterMetricValue(metric)
	if after != before+1 {
		t.Errorf("denied/required_groups went from %v to %v", before, after)
	}
	// A second chain in the process registers nothing twice.
	newChain(t)
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil || !strings.Contains(err.Error(), "Store") || !strings.Contains(err.Error(), "ClusterState") {
		t.Errorf("New(Config{}) = %v", err)
	}
}
