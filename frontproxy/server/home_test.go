package server_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	shardoptions "github.com/tessera-dev/tessera/shard/options"
	shardserver "github.com/tessera-dev/tessera/shard/server"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestHomeThroughFrontProxy uses the home workspace ~ through the
// front-proxy: kubectl in ~ creates the home, kubectl ws ~ enters it, ~:child
// reaches a workspace in it, and users outside the home creator groups are
// refused as the shard refuses them.
func TestHomeThroughFrontProxy(t *testing.T) {
	e := start(t, time.Hour,
		withTokens(t, "bob-token,bob,bob-uid,home-owners", "carol-token,carol,carol-uid,"),
		func(o *shardoptions.Options) { o.HomeCreatorGroups = []string{"home-owners"} })
	bob := e.tokenKubeconfig(t, "bob-token", "root")
	want := shardserver.HomePath(shardserver.HomePrefix, "bob", e.shard.Options.HomeWorkspacesBucketLevels, e.shard.Options.HomeWorkspacesBucketSize)

	t.Run("kubectl in ~ creates the home", func(t *testing.T) {
		if _, err := e.kcp(t, logicalcluster.Root).Workspaces().Get(t.Context(), "users", metav1.GetOptions{}); err == nil {
			t.Fatal("root:users exists before any home was used")
		}
		// The home is Ready when the shard answers; the owner's rights in
		// it may take a moment more.
		eventually(t, time.Minute, "bob creating a configmap in ~", func(context.Context) (bool, error) {
			out, err := e.kubectl(t, bob, "~", "create", "configmap", "made-at-home", "--from-literal=k=v")
			return err == nil || strings.Contains(out, "AlreadyExists"), errorOf(out, err)
		})
		if out, err := e.kubectl(t, bob, "~", "get", "configmaps"); err != nil || !strings.Contains(out, "made-at-home") {
			t.Fatalf("kubectl get configmaps in ~: %v\n%s", err, out)
		}
		// It is bob's home at root:users:<bucket>:<bucket>:bob.
		home := e.workspaceAt(t, want)
		if home.Status.Phase != corev1alpha1.LogicalClusterPhaseReady || home.Spec.Type.String() != "root:home" {
			t.Fatalf("bob's home %s: phase %q type %v", want, home.Status.Phase, home.Spec.Type)
		}
		if _, err := e.kube(t, logicalcluster.Name(home.Spec.Cluster)).CoreV1().ConfigMaps("default").Get(t.Context(), "made-at-home", metav1.GetOptions{}); err != nil {
			t.Fatalf("the configmap is not in bob's home %s: %v", want, err)
		}
	})

	t.Run("kubectl ws ~ and kubectl ws enter the home", func(t *testing.T) {
		ws := newWSSession(t, bob, wsPlugin(t))
		if out := ws.must("ws", "~"); !strings.Contains(out, want.String()) {
			t.Errorf("kubectl ws ~ printed %q, want %s", out, want)
		}
		if out := ws.must("config", "view", "--minify", "--output=jsonpath={.clusters[0].cluster.server}"); out != e.proxyURL+"/clusters/"+want.String() {
			t.Errorf("the server after kubectl ws ~ is %q, want the home through the proxy", out)
		}
		if out := ws.must("get", "configmaps"); !strings.Contains(out, "made-at-home") {
			t.Errorf("kubectl get configmaps at home: %s", out)
		}
		ws.must("ws", "root")
		if out := ws.must("ws"); !strings.Contains(out, want.String()) {
			t.Errorf("kubectl ws printed %q, want %s", out, want)
		}
		ws.must("ws", "create", "child")
	})

	t.Run("~:child is a workspace in the home", func(t *testing.T) {
		eventually(t, time.Minute, "bob creating a configmap in ~:child", func(context.Context) (bool, error) {
			out, err := e.kubectl(t, bob, "~:child", "create", "configmap", "made-in-child")
			return err == nil || strings.Contains(out, "AlreadyExists"), errorOf(out, err)
		})
		child := e.workspaceAt(t, want.Join("child"))
		if _, err := e.kube(t, logicalcluster.Name(child.Spec.Cluster)).CoreV1().ConfigMaps("default").Get(t.Context(), "made-in-child", metav1.GetOptions{}); err != nil {
			t.Fatalf("the configmap is not in %s: %v", want.Join("child"), err)
		}
		if out, err := e.kubectl(t, bob, "~:nope", "get", "configmaps"); err == nil || !strings.Contains(out, "NotFound") && !strings.Contains(out, "not found") {
			t.Errorf("~:nope: %v, want not found\n%s", err, out)
		}
	})

	t.Run("a client certificate in the creator groups has a home", func(t *testing.T) {
		erin := e.clientCert(t, "erin", "home-owners")
		c := e.httpClient(t, &erin)
		eventually(t, time.Minute, "erin listing configmaps in ~", func(context.Context) (bool, error) {
			code, body := e.do(t, c, http.MethodGet, "/clusters/~/api/v1/namespaces/default/configmaps", nil, nil)
			return code == http.StatusOK, errorOf(body, nil)
		})
		e.workspaceAt(t, shardserver.HomePath(shardserver.HomePrefix, "erin", e.shard.Options.HomeWorkspacesBucketLevels, e.shard.Options.HomeWorkspacesBucketSize))
		code, body := e.do(t, c, http.MethodGet, "/clusters/root:org/apis/tenancy.kcp.io/v1alpha1/workspaces/~", nil, nil)
		if code != http.StatusOK || !strings.Contains(body, `"name":"erin"`) {
			t.Errorf("GET workspaces/~ in a path that does not exist: status %d: %s", code, body)
		}
	})

	t.Run("a user outside the creator groups gets 403", func(t *testing.T) {
		carol := e.tokenKubeconfig(t, "carol-token", "root")
		out, err := e.kubectl(t, carol, "~", "get", "configmaps")
		if err == nil || !strings.Contains(out, "Forbidden") {
			t.Errorf("carol in ~: %v, want the shard's refusal\n%s", err, out)
		}
		for _, p := range []string{"/clusters/~/api", "/clusters/~:child/api", "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~"} {
			code, body := e.do(t, e.httpClient(t, nil), http.MethodGet, p, http.Header{"Authorization": {"Bearer carol-token"}}, nil)
			if code != http.StatusForbidden || !strings.Contains(body, `"kind":"Status"`) || !strings.Contains(body, "home-owners") {
				t.Errorf("carol %s: status %d, want a 403 Status: %s", p, code, body)
			}
		}
	})

	t.Run("impersonation with ~ gets 400", func(t *testing.T) {
		erin := e.clientCert(t, "erin", "home-owners")
		for _, p := range []string{"/clusters/~/api", "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~"} {
			code, body := e.do(t, e.httpClient(t, &erin), http.MethodGet, p, http.Header{"Impersonate-User": {"bob"}}, nil)
			if code != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400: %s", p, code, body)
			}
		}
	})
}

// workspaceAt returns the Ready Workspace at path p, read on the shard.
func (e *env) workspaceAt(t *testing.T, p logicalcluster.Path) *tenancyv1alpha1.Workspace {
	t.Helper()
	parent := logicalcluster.Root
	var ws *tenancyv1alpha1.Workspace
	for _, name := range strings.Split(p.String(), logicalcluster.Separator)[1:] {
		var err error
		ws, err = e.kcp(t, parent).Workspaces().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("workspace %s in %s (on the way to %s): %v", name, parent, p, err)
		}
		parent = logicalcluster.Name(ws.Spec.Cluster)
	}
	return ws
}

// tokenKubeconfig writes a kubeconfig with a bearer token for a workspace
// path through the proxy.
func (e *env) tokenKubeconfig(t *testing.T, token, path string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: ` + e.proxyURL + `/clusters/` + path + `
    certificate-authority: ` + e.servingCA + `
users:
- name: user
  user:
    token: ` + token + `
contexts:
- name: proxy
  context: {cluster: proxy, user: user}
current-context: proxy
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// withTokens makes the shard accept static tokens ("token,user,uid,groups"
// lines).
func withTokens(t *testing.T, lines ...string) framework.Option {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(o *shardoptions.Options) { o.Authentication.TokenAuthFile = p }
}

// wsPlugin builds cmd/kubectl-ws into a directory, to be put first on PATH
// so that kubectl finds the plugin.
func wsPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-ws"), "github.com/tessera-dev/tessera/cmd/kubectl-ws").CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-ws: %v\n%s", err, out)
	}
	return dir
}

// wsSession runs kubectl with the kubectl-ws plugin on PATH against its own
// copy of a kubeconfig.
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

// must runs kubectl and fails the test on error.
func (w *wsSession) must(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(framework.KubectlPath(w.t), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+w.kubeconfig, "PATH="+w.path, "KUBECACHEDIR="+w.cacheDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// errorOf turns a command's output into the error eventually reports.
func errorOf(out string, err error) error {
	if err == nil && out == "" {
		return nil
	}
	return &outputError{out: out, err: err}
}

type outputError struct {
	out string
	err error
}

func (e *outputError) Error() string {
	if e.err == nil {
		return e.out
	}
	return e.err.Error() + ": " + e.out
}
