package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// authzOp is one request of the matrix.
type authzOp struct {
	name string
	do   func(ctx context.Context, c kubernetes.Interface) error
}

var (
	listConfigMaps = authzOp{"list configmaps in default", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err
	}}
	listConfigMapsElsewhere = authzOp{"list configmaps in other", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().ConfigMaps("other").List(ctx, metav1.ListOptions{})
		return err
	}}
	listAllConfigMaps = authzOp{"list configmaps in all namespaces", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
		return err
	}}
	createConfigMap = authzOp{"create a configmap in default", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "authz-"}}, metav1.CreateOptions{})
		return err
	}}
	listSecrets = authzOp{"list secrets in default", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
		return err
	}}
	listNamespaces = authzOp{"list namespaces", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		return err
	}}
	listRoles = authzOp{"list roles in default", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.RbacV1().Roles("default").List(ctx, metav1.ListOptions{})
		return err
	}}
	discover = authzOp{"read discovery", func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().RESTClient().Get().AbsPath("/api").Do(ctx).Error()
	}}
	whoAmI = authzOp{"ask who it is", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err
	}}
)

// authzCell is one user, cluster and request of the matrix, with the
// outcome: allowed, or 403 with a message that contains reasons.
type authzCell struct {
	user    string
	cluster logicalcluster.Name
	op      authzOp
	reasons []string // nil: allowed
}

func (c authzCell) String() string {
	return fmt.Sprintf("%s in %s: %s", c.user, c.cluster, c.op.name)
}

// runMatrix checks every cell; allowed cells first and with retries, as
// bindings take a moment to reach the authorizer, then the 403 cells once.
func runMatrix(t *testing.T, s *framework.Shard, tokens map[string]string, cells []authzCell) {
	t.Helper()
	client := func(c authzCell) kubernetes.Interface {
		if c.user == "admin" {
			return kube(t, s, c.cluster)
		}
		return tokenClient(t, s, c.cluster, tokens[c.user])
	}
	for _, c := range cells {
		if c.reasons == nil {
			t.Run(c.String(), func(t *testing.T) {
				eventuallyAllowed(t, c.String(), func(ctx context.Context) error { return c.op.do(ctx, client(c)) })
			})
		}
	}
	for _, c := range cells {
		if c.reasons != nil {
			t.Run(c.String(), func(t *testing.T) {
				forbiddenBecause(t, c.String(), c.op.do(t.Context(), client(c)), c.reasons...)
			})
		}
	}
}

// TestAuthzIsolationMatrix: users with static tokens and the shard admin
// (client certificate) against Ready, guarded, initializing, system and
// missing clusters.
func TestAuthzIsolationMatrix(t *testing.T) {
	tokens := map[string]string{"alice": "alice-token", "bob": "bob-token", "carol": "carol-token", "dave": "dave-token", "erin": "erin-token", "frank": "frank-token"}
	s := framework.StartShard(t, withTokens(t,
		"alice-token,alice,alice-uid",
		"bob-token,bob,bob-uid",
		"carol-token,carol,carol-uid",
		`dave-token,dave,dave-uid,"ops"`,
		`erin-token,erin,erin-uid,"team-x"`,
		`frank-token,frank,frank-uid,"team-x,team-y"`,
	))
	createCluster(t, s, "a")
	createCluster(t, s, "b")
	createLogicalCluster(t, s, "guarded", map[string]string{"authorization.kcp.io/required-groups": "team-x;team-y,ops"})
	createLogicalCluster(t, s, "init", nil, "system:authz-test")
	eventually(t, controllerTimeout, "the default namespace of guarded", func(ctx context.Context) (bool, error) {
		_, err := kube(t, s, "guarded").CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})

	// alice may enter a and edit default; bob administers b (and init).
	bindClusterRole(t, s, "a", "", "alice-access", "system:kcp:workspace:access", authzUser("alice"))
	bindClusterRole(t, s, "a", "default", "alice-edit", "edit", authzUser("alice"))
	bindClusterRole(t, s, "b", "", "bob-admin", "cluster-admin", authzUser("bob"))
	bindClusterRole(t, s, "init", "", "bob-admin", "cluster-admin", authzUser("bob"))
	// Everyone authenticated may enter guarded and read in default, if
	// they are in its required groups.
	bindClusterRole(t, s, "guarded", "", "everyone-access", "system:kcp:workspace:access", authzGroup("system:authenticated"))
	bindClusterRole(t, s, "guarded", "default", "everyone-view", "view", authzGroup("system:authenticated"))

	noAccessToA := []string{"workspace access not permitted", `no verb=access permission on / in logical cluster "a"`}
	noAccessToB := []string{"workspace access not permitted", `no verb=access permission on / in logical cluster "b"`}
	rbacInA := []string{`neither the policy of logical cluster "a" nor the bootstrap policy`}
	runMatrix(t, s, tokens, []authzCell{
		{"alice", "a", listConfigMaps, nil},
		{"alice", "a", createConfigMap, nil},
		{"alice", "a", listSecrets, nil},
		{"alice", "a", discover, nil},
		{"alice", "a", whoAmI, nil},
		{"alice", "a", listConfigMapsElsewhere, rbacInA},
		{"alice", "a", listNamespaces, rbacInA},
		{"alice", "a", listRoles, rbacInA},
		{"alice", "b", listConfigMaps, noAccessToB},
		{"alice", "b", discover, noAccessToB},
		{"alice", "guarded", listConfigMaps, []string{`user "alice" is not a member of the groups logical cluster "guarded" requires: team-x;team-y,ops`}},
		{"alice", "system:admin", listConfigMaps, []string{`logical cluster "system:admin" is a system cluster`}},
		{"alice", "nowhere", listConfigMaps, []string{`logical cluster "nowhere" does not exist`}},
		{"alice", "*", listAllConfigMaps, []string{"requests across all logical clusters are only allowed for system:masters"}},

		{"bob", "b", listConfigMaps, nil},
		{"bob", "b", listNamespaces, nil},
		{"bob", "b", listRoles, nil},
		{"bob", "a", listConfigMaps, noAccessToA},
		{"bob", "init", listConfigMaps, []string{`logical cluster "init" is not ready (phase Initializing)`}},
		{"bob", "*", listAllConfigMaps, []string{"requests across all logical clusters"}},

		{"carol", "a", listConfigMaps, noAccessToA},
		{"carol", "a", discover, noAccessToA},
		{"carol", "b", whoAmI, noAccessToB},

		{"dave", "guarded", listConfigMaps, nil},
		{"frank", "guarded", listConfigMaps, nil},
		{"erin", "guarded", listConfigMaps, []string{`user "erin" is not a member of the groups logical cluster "guarded" requires`}},
		{"dave", "guarded", listSecrets, []string{`neither the policy of logical cluster "guarded"`}},

		{"admin", "a", listNamespaces, nil},
		{"admin", "init", listConfigMaps, nil},
		{"admin", "system:admin", listConfigMaps, nil},
		{"admin", "*", listAllConfigMaps, nil},
	})
}

// TestAuthzServiceAccountIsolation: a service account token of a works in a,
// where it is bound, and is refused in b even where b binds every service
// account.
func TestAuthzServiceAccountIsolation(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"a", "b"} {
		createCluster(t, s, c)
		bindClusterRole(t, s, c, "", "service-accounts-view", "view", authzGroup("system:serviceaccounts"))
		eventually(t, controllerTimeout, "the default service account of "+string(c), func(ctx context.Context) (bool, error) {
			_, err := kube(t, s, c).CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, err
		})
	}
	req, err := kube(t, s, "a").CoreV1().ServiceAccounts("default").CreateToken(t.Context(), "default",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token of default/default in a: %v", err)
	}
	runMatrix(t, s, map[string]string{"sa-of-a": req.Status.Token}, []authzCell{
		{"sa-of-a", "a", listConfigMaps, nil},
		{"sa-of-a", "a", whoAmI, nil},
		{"sa-of-a", "a", listSecrets, []string{`neither the policy of logical cluster "a"`}},
		{"sa-of-a", "b", listConfigMaps, []string{`service account "system:serviceaccount:default:default" of logical cluster "a" has no access to logical cluster "b"`}},
	})
}

// TestAuthzSubjectAccessReviewsPerCluster: SubjectAccessReviews answer with
// the chain of the cluster they are made in, for service accounts of that
// cluster and of others, and for users bound elsewhere.
func TestAuthzSubjectAccessReviewsPerCluster(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"a", "b"} {
		createCluster(t, s, c)
		bindClusterRole(t, s, c, "", "service-accounts-view", "view", authzGroup("system:serviceaccounts"))
	}
	bindClusterRole(t, s, "a", "", "alice-access", "system:kcp:workspace:access", authzUser("alice"))
	bindClusterRole(t, s, "a", "default", "alice-view", "view", authzUser("alice"))

	serviceAccountOfA := authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:default:default",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"},
		Extra:  map[string]authorizationv1.ExtraValue{"authentication.kcp.io/cluster-name": {"a"}},
	}
	alice := authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"system:authenticated"}}
	review := func(ctx context.Context, cluster logicalcluster.Name, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: "list", Resource: "configmaps", Namespace: "default", Version: "v1"}
		r, err := kube(t, s, cluster).AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return authorizationv1.SubjectAccessReviewStatus{}, err
		}
		return r.Status, nil
	}
	for _, who := range []struct {
		name string
		spec authorizationv1.SubjectAccessReviewSpec
	}{{"service account of a", serviceAccountOfA}, {"alice", alice}} {
		eventually(t, authzTimeout, who.name+" allowed in a", func(ctx context.Context) (bool, error) {
			st, err := review(ctx, "a", who.spec)
			return err == nil && st.Allowed, err
		})
	}
	st, err := review(t.Context(), "b", serviceAccountOfA)
	if err != nil || st.Allowed || !st.Denied || !strings.Contains(st.Reason, `of logical cluster "a" has no access to logical cluster "b"`) {
		t.Errorf("service account of a in b: %+v %v", st, err)
	}
	st, err = review(t.Context(), "b", alice)
	if err != nil || st.Allowed || !strings.Contains(st.Reason, `no verb=access permission on / in logical cluster "b"`) {
		t.Errorf("alice in b: %+v %v", st, err)
	}
}
