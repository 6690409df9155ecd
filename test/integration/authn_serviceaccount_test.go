package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// clusterNameExtraKey is the user extra that names the logical cluster of a
// service account.
const clusterNameExtraKey = "authentication.kcp.io/cluster-name"

// defaultIssuer is the issuer of the shard's tokens with default flags.
const defaultIssuer = "https://tessera.dev"

// grantServiceAccountsReading lets every service account read configmaps
// and ask who it is in cluster, through RBAC of that cluster. The
// authorizer may still refuse service accounts of other clusters.
func grantServiceAccountsReading(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) {
	t.Helper()
	rbac := kube(t, s, cluster).RbacV1()
	if _, err := rbac.ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "authn-test-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}, Verbs: []string{"create"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the reader role in %s: %v", cluster, err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "authn-test-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "authn-test-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding the reader role in %s: %v", cluster, err)
	}
}

// waitForServiceAccount waits until the service account exists and returns
// it.
func waitForServiceAccount(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, namespace, name string) *corev1.ServiceAccount {
	t.Helper()
	var sa *corev1.ServiceAccount
	eventually(t, controllerTimeout, "service account "+namespace+"/"+name+" in "+string(cluster), func(ctx context.Context) (bool, error) {
		var err error
		sa, err = kube(t, s, cluster).CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil, err
	})
	return sa
}

// createToken runs `kubectl create token` in cluster and returns the token.
func createToken(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, args ...string) string {
	t.Helper()
	out := s.MustKubectl(t, cluster, append([]string{"create", "token"}, args...)...)
	token := strings.TrimSpace(out)
	if strings.Count(token, ".") != 2 {
		t.Fatalf("kubectl create token printed %q, want a JWT", out)
	}
	return token
}

// withToken returns a client of cluster that authenticates with token only.
func withToken(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, token string) kubernetes.Interface {
	t.Helper()
	cfg := rest.AnonymousClientConfig(s.Config(cluster))
	cfg.BearerToken = token
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reviewToken creates a TokenReview of token in cluster as the shard admin.
func reviewToken(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, token string) authenticationv1.TokenReviewStatus {
	t.Helper()
	review, err := kube(t, s, cluster).AuthenticationV1().TokenReviews().Create(t.Context(),
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenReview in %s: %v", cluster, err)
	}
	return review.Status
}

// claimsOf decodes the claims of a JWT without verifying it.
func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// setupServiceAccountClusters starts a shard with clusters a and b, where
// every service account may read configmaps by RBAC, and returns a token
// of the default service account of a, made by `kubectl create token`.
func setupServiceAccountClusters(t *testing.T, a, b logicalcluster.Name) (*framework.Shard, *corev1.ServiceAccount, string) {
	t.Helper()
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{a, b} {
		createCluster(t, s, c)
		grantServiceAccountsReading(t, s, c)
	}
	sa := waitForServiceAccount(t, s, a, "default", "default")
	// The default service account of b has the same name, not the same UID.
	waitForServiceAccount(t, s, b, "default", "default")
	return s, sa, createToken(t, s, a, "default", "-n", "default")
}

// TestAuthnServiceAccountToken issues a token with `kubectl create token`
// and uses it in its own logical cluster.
func TestAuthnServiceAccountToken(t *testing.T) {
	a, b := logicalcluster.Name("authn-sa-a"), logicalcluster.Name("authn-sa-b")
	s, sa, token := setupServiceAccountClusters(t, a, b)

	t.Run("the token names its cluster, service account and issuer", func(t *testing.T) {
		claims := claimsOf(t, token)
		k, _ := claims["kubernetes.io"].(map[string]any)
		saClaims, _ := k["serviceaccount"].(map[string]any)
		if claims["iss"] != defaultIssuer || claims["sub"] != "system:serviceaccount:default:default" ||
			k["clusterName"] != string(a) || k["namespace"] != "default" || saClaims["uid"] != string(sa.UID) {
			t.Errorf("claims %v", claims)
		}
		exp, _ := claims["exp"].(float64)
		if d := time.Until(time.Unix(int64(exp), 0)); d < 50*time.Minute || d > 61*time.Minute {
			t.Errorf("the token expires in %s, want the default of an hour", d)
		}
	})

	t.Run("TokenReview in its cluster authenticates the service account", func(t *testing.T) {
		st := reviewToken(t, s, a, token)
		if !st.Authenticated {
			t.Fatalf("not authenticated: %q", st.Error)
		}
		u := st.User
		if u.Username != "system:serviceaccount:default:default" || u.UID != string(sa.UID) {
			t.Errorf("user %q uid %q, want the default service account %s", u.Username, u.UID, sa.UID)
		}
		for _, g := range []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"} {
			if !slices.Contains(u.Groups, g) {
				t.Errorf("groups %q lack %s", u.Groups, g)
			}
		}
		if got := u.Extra[clusterNameExtraKey]; len(got) != 1 || got[0] != string(a) {
			t.Errorf("extra %s = %q, want [%s]", clusterNameExtraKey, got, a)
		}
		if !slices.Contains(st.Audiences, defaultIssuer) {
			t.Errorf("audiences %q", st.Audiences)
		}
	})

	t.Run("TokenReview in another cluster does not authenticate it", func(t *testing.T) {
		if st := reviewToken(t, s, b, token); st.Authenticated || st.Error == "" {
			t.Errorf("TokenReview in %s: authenticated %v, error %q; want not authenticated with a reason", b, st.Authenticated, st.Error)
		}
	})

	t.Run("the token works in its cluster", func(t *testing.T) {
		if _, err := withToken(t, s, a, token).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Errorf("listing configmaps in %s with its own service account token: %v", a, err)
		}
	})

	t.Run("kubectl auth whoami with the token", func(t *testing.T) {
		out, err := kubectlWithToken(t, s, a, token, "auth", "whoami", "-o", "json")
		if err != nil {
			t.Fatalf("kubectl auth whoami: %v\n%s", err, out)
		}
		var review authenticationv1.SelfSubjectReview
		if err := json.Unmarshal([]byte(out), &review); err != nil {
			t.Fatalf("decoding %s: %v", out, err)
		}
		u := review.Status.UserInfo
		if u.Username != "system:serviceaccount:default:default" || len(u.Extra[clusterNameExtraKey]) != 1 || u.Extra[clusterNameExtraKey][0] != string(a) {
			t.Errorf("whoami says %+v", u)
		}
	})

	t.Run("a forged token is refused", func(t *testing.T) {
		parts := strings.Split(token, ".")
		claims := claimsOf(t, token)
		claims["kubernetes.io"].(map[string]any)["clusterName"] = string(b)
		payload, err := json.Marshal(claims)
		if err != nil {
			t.Fatal(err)
		}
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
		_, err = withToken(t, s, b, forged).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("a token with a changed cluster claim: %v, want 401", err)
		}
	})
}

// TestAuthnServiceAccountTokenRefusedInOtherCluster uses a service account
// token of cluster a in cluster b, where RBAC grants every service account
// reading configmaps: the workspace content authorizer refuses service
// accounts of other clusters (403).
func TestAuthnServiceAccountTokenRefusedInOtherCluster(t *testing.T) {
	a, b := logicalcluster.Name("authn-other-a"), logicalcluster.Name("authn-other-b")
	s, _, token := setupServiceAccountClusters(t, a, b)
	// RBAC of b lets b's own service accounts in...
	own := createToken(t, s, b, "default", "-n", "default")
	if _, err := withToken(t, s, b, own).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatalf("a service account token of %s used in %s: %v", b, b, err)
	}
	// ...but not a service account of a with the same name.
	_, err := withToken(t, s, b, token).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a service account token of %s used in %s: %v, want 403", a, b, err)
	}
}

// TestAuthnServiceAccountTokenLifecycle checks that tokens die with their
// service account, stay dead when it is recreated, survive a restart of
// the shard, and honour the duration and bound object kubectl asks for.
func TestAuthnServiceAccountTokenLifecycle(t *testing.T) {
	s := framework.StartShard(t)
	const a = logicalcluster.Name("authn-life")
	createCluster(t, s, a)
	grantServiceAccountsReading(t, s, a)
	client := kube(t, s, a)
	list := func(token string) error {
		_, err := withToken(t, s, a, token).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		return err
	}

	s.MustKubectl(t, a, "create", "serviceaccount", "robot", "-n", "default")
	first := createToken(t, s, a, "robot", "-n", "default")
	if err := list(first); err != nil {
		t.Fatalf("a fresh token: %v", err)
	}

	short := createToken(t, s, a, "robot", "-n", "default", "--duration", "20m")
	if exp, _ := claimsOf(t, short)["exp"].(float64); time.Until(time.Unix(int64(exp), 0)) > 21*time.Minute {
		t.Errorf("a token asked for 20m expires at %v", time.Unix(int64(exp), 0))
	}

	t.Run("a token survives a restart", func(t *testing.T) {
		s.Stop()
		s.Start()
		eventually(t, controllerTimeout, "the token to work after a restart", func(context.Context) (bool, error) {
			err := list(first)
			return err == nil, err
		})
	})

	t.Run("a token bound to a secret dies with it", func(t *testing.T) {
		if _, err := client.CoreV1().Secrets("default").Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "anchor"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bound := createToken(t, s, a, "robot", "-n", "default", "--bound-object-kind", "Secret", "--bound-object-name", "anchor")
		if err := list(bound); err != nil {
			t.Fatalf("a token bound to an existing secret: %v", err)
		}
		if err := client.CoreV1().Secrets("default").Delete(t.Context(), "anchor", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the bound token to be refused", func(context.Context) (bool, error) {
			return apierrors.IsUnauthorized(list(bound)), nil
		})
	})

	t.Run("a token dies with its service account and stays dead", func(t *testing.T) {
		if err := client.CoreV1().ServiceAccounts("default").Delete(t.Context(), "robot", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the token of the deleted service account to be refused", func(context.Context) (bool, error) {
			return apierrors.IsUnauthorized(list(first)), nil
		})
		if st := reviewToken(t, s, a, first); st.Authenticated {
			t.Error("TokenReview still authenticates the token of a deleted service account")
		}

		s.MustKubectl(t, a, "create", "serviceaccount", "robot", "-n", "default")
		second := createToken(t, s, a, "robot", "-n", "default")
		if err := list(second); err != nil {
			t.Fatalf("a token of the recreated service account: %v", err)
		}
		if err := list(first); !apierrors.IsUnauthorized(err) {
			t.Errorf("the token of the first service account of that name: %v, want 401", err)
		}
	})

	t.Run("tokens are refused for missing service accounts and short durations", func(t *testing.T) {
		if out, err := s.Kubectl(a, "create", "token", "ghost", "-n", "default"); err == nil || !strings.Contains(out, "NotFound") && !strings.Contains(out, "not found") {
			t.Errorf("a token for a missing service account: %v\n%s", err, out)
		}
		if out, err := s.Kubectl(a, "create", "token", "default", "-n", "default", "--duration", "1m"); err == nil || !strings.Contains(out, "10 minutes") {
			t.Errorf("a token of one minute: %v\n%s", err, out)
		}
	})
}

// TestAuthnLegacyTokenSecret has the token controller fill a Secret of type
// kubernetes.io/service-account-token, and clean it up.
func TestAuthnLegacyTokenSecret(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("authn-legacy-a"), logicalcluster.Name("authn-legacy-b")
	createCluster(t, s, a)
	createCluster(t, s, b)
	grantServiceAccountsReading(t, s, a)
	client := kube(t, s, a)
	ctx := t.Context()

	sa, err := client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokenSecret := func(name, account string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: account}},
			Type:       corev1.SecretTypeServiceAccountToken,
		}
	}
	if _, err := client.CoreV1().Secrets("default").Create(ctx, tokenSecret("builder-token", "builder"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var secret *corev1.Secret
	eventually(t, controllerTimeout, "the token secret to be filled", func(ctx context.Context) (bool, error) {
		secret, err = client.CoreV1().Secrets("default").Get(ctx, "builder-token", metav1.GetOptions{})
		return err == nil && len(secret.Data[corev1.ServiceAccountTokenKey]) > 0, err
	})
	ca, err := os.ReadFile(filepath.Join(s.Options.RootDirectory, "certs", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(secret.Data[corev1.ServiceAccountRootCAKey]) != string(ca) || string(secret.Data[corev1.ServiceAccountNamespaceKey]) != "default" ||
		secret.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Errorf("token secret: ca.crt matches the shard CA: %v, namespace %q, uid annotation %q (want %s)",
			string(secret.Data[corev1.ServiceAccountRootCAKey]) == string(ca), secret.Data[corev1.ServiceAccountNamespaceKey], secret.Annotations[corev1.ServiceAccountUIDKey], sa.UID)
	}
	token := string(secret.Data[corev1.ServiceAccountTokenKey])
	if claimsOf(t, token)["kubernetes.io/serviceaccount/clusterName"] != string(a) {
		t.Errorf("legacy claims %v do not name cluster %s", claimsOf(t, token), a)
	}

	if st := reviewToken(t, s, a, token); !st.Authenticated || st.User.Username != "system:serviceaccount:default:builder" {
		t.Errorf("TokenReview of the legacy token in %s: %+v", a, st)
	}
	if st := reviewToken(t, s, b, token); st.Authenticated {
		t.Errorf("TokenReview of the legacy token of %s in %s authenticated it", a, b)
	}
	if _, err := withToken(t, s, a, token).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing configmaps with the legacy token: %v", err)
	}

	t.Run("a token secret of a missing service account is deleted", func(t *testing.T) {
		if _, err := client.CoreV1().Secrets("default").Create(ctx, tokenSecret("ghost-token", "ghost"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the secret of a missing service account to be deleted", func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().Secrets("default").Get(ctx, "ghost-token", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})

	t.Run("deleting the secret revokes the token", func(t *testing.T) {
		if _, err := client.CoreV1().Secrets("default").Create(ctx, tokenSecret("second-token", "builder"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var second string
		eventually(t, controllerTimeout, "the second token secret to be filled", func(ctx context.Context) (bool, error) {
			s, err := client.CoreV1().Secrets("default").Get(ctx, "second-token", metav1.GetOptions{})
			if err == nil {
				second = string(s.Data[corev1.ServiceAccountTokenKey])
			}
			return second != "", err
		})
		if err := client.CoreV1().Secrets("default").Delete(ctx, "second-token", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the token of the deleted secret to be refused", func(ctx context.Context) (bool, error) {
			_, err := withToken(t, s, a, second).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			return apierrors.IsUnauthorized(err), nil
		})
	})

	t.Run("deleting the service account deletes its token secrets", func(t *testing.T) {
		if err := client.CoreV1().ServiceAccounts("default").Delete(ctx, "builder", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptrUID(sa.UID)}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, controllerTimeout, "the token secret of the deleted service account to be deleted", func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().Secrets("default").Get(ctx, "builder-token", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if _, err := withToken(t, s, a, token).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("the legacy token of a deleted service account: %v, want 401", err)
		}
	})
}

func ptrUID(uid types.UID) *types.UID { return &uid }

// kubectlWithToken runs kubectl against cluster with a kubeconfig that
// holds only the shard's CA and token.
func kubectlWithToken(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, token string, args ...string) (string, error) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["shard"] = &clientcmdapi.Cluster{Server: s.URL + "/clusters/" + string(cluster), CertificateAuthority: filepath.Join(s.Options.RootDirectory, "certs", "ca.crt")}
	cfg.AuthInfos["token"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["token"] = &clientcmdapi.Context{Cluster: "shard", AuthInfo: "token"}
	cfg.CurrentContext = "token"
	p := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return framework.RunKubectl(append([]string{"--kubeconfig", p}, args...)...)
}
