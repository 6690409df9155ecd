package integration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// authzTimeout bounds how long a binding takes to reach the authorizer's
// informers.
const authzTimeout = 30 * time.Second

// tokenConfig returns a config for cluster that authenticates with a
// bearer token only ("" for the shard base URL, "*" for all clusters).
func tokenConfig(s *framework.Shard, cluster logicalcluster.Name, token string) *rest.Config {
	cfg := rest.AnonymousClientConfig(s.Config(cluster))
	cfg.BearerToken = token
	return cfg
}

// tokenClient returns a kubernetes client of cluster for a token.
func tokenClient(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, token string) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(tokenConfig(s, cluster, token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bindClusterRole binds a ClusterRole to subjects in a logical cluster,
// cluster wide (namespace "") or in a namespace, as the shard admin.
func bindClusterRole(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, namespace, name, role string, subjects ...rbacv1.Subject) {
	t.Helper()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	rbac := kube(t, s, cluster).RbacV1()
	var err error
	if namespace == "" {
		_, err = rbac.ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	} else {
		_, err = rbac.RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("binding %s to %v in %s/%s: %v", role, subjects, cluster, namespace, err)
	}
}

func authzUser(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}
}

func authzGroup(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}
}

// createLogicalCluster creates a LogicalCluster as the shard admin with
// annotations and initializers, without waiting for it to be ready.
func createLogicalCluster(t *testing.T, s *framework.Shard, name logicalcluster.Name, annotations map[string]string, initializers ...string) {
	t.Helper()
	client, err := dynamic.NewForConfig(s.Config(name))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"name": "cluster"}
	if len(annotations) > 0 {
		a := map[string]any{}
		for k, v := range annotations {
			a[k] = v
		}
		meta["annotations"] = a
	}
	lc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster", "metadata": meta,
	}}
	if len(initializers) > 0 {
		var inits []any
		for _, i := range initializers {
			inits = append(inits, i)
		}
		lc.Object["spec"] = map[string]any{"initializers": inits}
	}
	if _, err := client.Resource(logicalClusterGVR).Create(t.Context(), lc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating logical cluster %s: %v", name, err)
	}
}

// forbiddenBecause fails t unless err is a 403 whose message contains
// every reason.
func forbiddenBecause(t *testing.T, what string, err error, reasons ...string) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		t.Errorf("%s: got %v, want 403 Forbidden", what, err)
		return
	}
	for _, r := range reasons {
		if !strings.Contains(status.Status().Message, r) {
			t.Errorf("%s: 403 message %q lacks %q", what, status.Status().Message, r)
		}
	}
}

// eventuallyAllowed waits until op succeeds, for bindings that have just
// been created to reach the authorizer.
func eventuallyAllowed(t *testing.T, what string, op func(ctx context.Context) error) {
	t.Helper()
	eventually(t, authzTimeout, what, func(ctx context.Context) (bool, error) {
		err := op(ctx)
		return err == nil, err
	})
}

// tokenKubeconfig writes a kubeconfig whose only credential is token, for
// cluster ("" for the shard base URL).
func tokenKubeconfig(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, token string) string {
	t.Helper()
	server := s.URL
	if cluster != "" {
		server += "/clusters/" + string(cluster)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["shard"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: filepath.Join(s.Options.RootDirectory, "certs", "ca.crt")}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["user"] = &clientcmdapi.Context{Cluster: "shard", AuthInfo: "user"}
	cfg.CurrentContext = "user"
	p := filepath.Join(t.TempDir(), "user.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// kubectlAs runs kubectl against cluster with token as the only
// credential; the admin kubeconfig's client certificate would win over a
// --token flag.
func kubectlAs(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, token string, args ...string) (string, error) {
	t.Helper()
	return framework.RunKubectl(append([]string{"--kubeconfig", tokenKubeconfig(t, s, cluster, token)}, args...)...)
}
