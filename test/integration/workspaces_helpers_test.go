package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// workspaceTimeout bounds how long a workspace may take to become Ready.
const workspaceTimeout = time.Minute

// kcpClient returns an admin client of the kcp API groups for a logical
// cluster or workspace path.
func kcpClient(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) *kcpclient.Clientset {
	t.Helper()
	c, err := kcpclient.NewForConfig(s.Config(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createWorkspace creates a Workspace as the shard admin and waits until
// it is Ready.
func createWorkspace(t *testing.T, s *framework.Shard, parent logicalcluster.Name, name string, typ *tenancyv1alpha1.WorkspaceTypeReference) *tenancyv1alpha1.Workspace {
	t.Helper()
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1alpha1.WorkspaceSpec{Type: typ}}
	if _, err := kcpClient(t, s, parent).Workspaces().Create(t.Context(), ws, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating workspace %s in %s: %v", name, parent, err)
	}
	return waitWorkspaceReady(t, s, parent, name)
}

// waitWorkspaceReady waits until the Workspace name in parent is Ready.
func waitWorkspaceReady(t *testing.T, s *framework.Shard, parent logicalcluster.Name, name string) *tenancyv1alpha1.Workspace {
	t.Helper()
	var ws *tenancyv1alpha1.Workspace
	eventually(t, workspaceTimeout, "workspace "+string(parent)+":"+name+" to be Ready", func(ctx context.Context) (bool, error) {
		var err error
		ws, err = kcpClient(t, s, parent).Workspaces().Get(ctx, name, metav1.GetOptions{})
		return err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, err
	})
	return ws
}

// waitWorkspaceGone waits until the Workspace name in parent is gone.
func waitWorkspaceGone(t *testing.T, s *framework.Shard, parent logicalcluster.Name, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "workspace "+string(parent)+":"+name+" to be gone", func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, s, parent).Workspaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// wsPlugin builds cmd/kubectl-ws into a directory and returns it, to be put
// first on PATH so that the real kubectl finds the plugin.
func wsPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-ws"), "github.com/tessera-dev/tessera/cmd/kubectl-ws").CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-ws: %v\n%s", err, out)
	}
	return dir
}

// kcpPlugin builds cmd/kubectl-kcp into dir, which goes on PATH so that
// the real kubectl runs "kubectl kcp ...".
func kcpPlugin(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-kcp"), "github.com/tessera-dev/tessera/cmd/kubectl-kcp").CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-kcp: %v\n%s", err, out)
	}
}

// wsSession runs kubectl with the kubectl-ws plugin on PATH against its own
// copy of a kubeconfig, as a user at a terminal would.
type wsSession struct {
	t          *testing.T
	kubeconfig string
	path       string
	cacheDir   string
}

func newWSSession(t *testing.T, kubeconfig, pluginDir string) *wsSession {
	t.Helper()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &wsSession{t: t, kubeconfig: p, path: pluginDir + string(os.PathListSeparator) + os.Getenv("PATH"), cacheDir: filepath.Join(dir, "cache")}
}

// run runs kubectl with args and returns its combined output.
func (w *wsSession) run(args ...string) (string, error) {
	cmd := exec.Command(framework.KubectlPath(w.t), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+w.kubeconfig, "PATH="+w.path, "KUBECACHEDIR="+w.cacheDir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs kubectl and fails the test on error.
func (w *wsSession) must(args ...string) string {
	w.t.Helper()
	out, err := w.run(args...)
	if err != nil {
		w.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// expect runs kubectl and checks that the output contains every line.
func (w *wsSession) expect(args []string, lines ...string) string {
	w.t.Helper()
	out := w.must(args...)
	for _, l := range lines {
		if !strings.Contains(out, l) {
			w.t.Errorf("kubectl %s: output lacks %q:\n%s", strings.Join(args, " "), l, out)
		}
	}
	return out
}

// kcpClientForToken returns a client of the kcp API groups that
// authenticates with token only.
func kcpClientForToken(s *framework.Shard, cluster logicalcluster.Name, token string) (*kcpclient.Clientset, error) {
	return kcpclient.NewForConfig(tokenConfig(s, cluster, token))
}

// kubeForToken returns a kubernetes client that authenticates with token
// only.
func kubeForToken(s *framework.Shard, cluster logicalcluster.Name, token string) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(tokenConfig(s, cluster, token))
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
}

// createRole creates a ClusterRole with rules in cluster as the admin.
func createRole(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := kube(t, s, cluster).RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ClusterRole %s in %s: %v", name, cluster, err)
	}
}
