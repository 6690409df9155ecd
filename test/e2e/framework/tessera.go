package framework

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/test/e2e/framework/process"
)

// LogicalClusters is the resource of the LogicalCluster objects.
var LogicalClusters = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}

// Tessera is an installation the suite talks to over HTTPS: one the
// framework started from the built binaries, or one named by
// TESSERA_E2E_KUBECONFIG.
type Tessera struct {
	// URL is the base URL of the shard, without /clusters/<name>.
	URL string
	// Kubeconfig is an admin kubeconfig; Context its context for URL.
	Kubeconfig string
	Context    string
	// UserKubeconfig authenticates a user who is not a shard admin; empty
	// when the installation offers none (TESSERA_E2E_USER_TOKEN).
	UserKubeconfig string
	// Process is the shard process; nil for an installation started by
	// someone else.
	Process *process.Process

	env *Env
}

// userToken is the token of the non-admin user the framework gives a shard
// it starts.
const userToken = "e2e-user-token"

// Tessera returns the suite's installation, starting it on first use.
func (e *Env) Tessera(ctx context.Context) (*Tessera, error) {
	e.startMu.Lock()
	defer e.startMu.Unlock()
	if e.tesseraErr != nil {
		return nil, flat(fmt.Errorf("an earlier start failed: %w", e.tesseraErr))
	}
	e.mu.Lock()
	t := e.tessera
	e.mu.Unlock()
	if t != nil {
		return t, nil
	}
	var err error
	if kc := os.Getenv("TESSERA_E2E_KUBECONFIG"); kc != "" {
		t, err = e.existingTessera(kc)
	} else {
		err = e.Time("start tessera", func() error {
			t, err = e.startTessera(ctx)
			return err
		})
	}
	if err != nil {
		e.tesseraErr = err
		return nil, flat(err)
	}
	e.mu.Lock()
	e.tessera = t
	e.mu.Unlock()
	return t, nil
}

// startTessera runs `tessera start` with its own root directory and free
// loopback ports, and waits for /readyz.
func (e *Env) startTessera(ctx context.Context) (*Tessera, error) {
	binDir := os.Getenv("TESSERA_E2E_BIN_DIR")
	if binDir == "" {
		root, err := repoRoot()
		if err != nil {
			return nil, err
		}
		binDir = filepath.Join(root, "bin")
	}
	bin := filepath.Join(binDir, "tessera")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("the tessera binary (make build, or set TESSERA_E2E_BIN_DIR): %w", err)
	}
	dir := filepath.Join(e.Dir, "tessera")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(userToken+",e2e-user,e2e-user-uid,e2e-team\n"), 0o600); err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "root")
	for attempt := 1; ; attempt++ {
		ports, err := process.FreePorts(3)
		if err != nil {
			return nil, err
		}
		p, err := e.group.Start(process.Spec{
			Name: "tessera",
			Path: bin,
			Args: append([]string{"start",
				"--root-directory", root,
				"--bind-address", "127.0.0.1",
				"--secure-port", process.Itoa(ports[0]),
				"--embedded-etcd-client-port", process.Itoa(ports[1]),
				"--embedded-etcd-peer-port", process.Itoa(ports[2]),
				"--embedded-etcd-unsafe-no-fsync",
				"--embedded-etcd-log-level", "warn",
				"--token-auth-file", tokens,
			}, e.TesseraArgs...),
			CleanExit: true,
		})
		if err != nil {
			return nil, err
		}
		t := &Tessera{
			URL:        fmt.Sprintf("https://127.0.0.1:%d", ports[0]),
			Kubeconfig: filepath.Join(root, "admin.kubeconfig"),
			Context:    "shard-base",
			Process:    p,
			env:        e,
		}
		err = t.waitReady(ctx)
		if err == nil {
			if err := t.writeUserKubeconfig(userToken); err != nil {
				return nil, err
			}
			return t, nil
		}
		_ = p.Stop(30 * time.Second)
		if !p.PortInUse() || attempt == 3 {
			return nil, err
		}
	}
}

// waitReady waits for the admin kubeconfig and then for /readyz, verified
// against the CA in that kubeconfig.
func (t *Tessera) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		if err := t.Process.ExitedError("before it wrote " + t.Kubeconfig); err != nil {
			return false, err
		}
		_, err := os.Stat(t.Kubeconfig)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", t.Kubeconfig, err)
	}
	cfg, err := t.Config("")
	if err != nil {
		return err
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	client.Timeout = 5 * time.Second
	return process.WaitHTTP(ctx, t.Process, client, t.URL+"/readyz")
}

// existingTessera uses the installation of an admin kubeconfig: its shard
// admin's context "shard-base" when it has one (kcp's and Tessera's
// kubeconfigs do), else "base", else its current context, with any
// /clusters/<name> cut from the server URL.
// TesseraAt returns the installation of an admin kubeconfig (its base or
// shard-base context, else its current one), e.g. one a suite installed.
func (e *Env) TesseraAt(kubeconfig string) (*Tessera, error) {
	return e.existingTessera(kubeconfig)
}

func (e *Env) existingTessera(kubeconfig string) (*Tessera, error) {
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("TESSERA_E2E_KUBECONFIG: %w", err)
	}
	ctxName := os.Getenv("TESSERA_E2E_CONTEXT")
	if ctxName == "" {
		ctxName = raw.CurrentContext
		for _, name := range []string{"base", "shard-base"} {
			if _, ok := raw.Contexts[name]; ok {
				ctxName = name
			}
		}
	}
	kctx, ok := raw.Contexts[ctxName]
	if !ok {
		return nil, fmt.Errorf("TESSERA_E2E_KUBECONFIG %s has no context %q", kubeconfig, ctxName)
	}
	cluster, ok := raw.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("TESSERA_E2E_KUBECONFIG %s: context %q names no cluster", kubeconfig, ctxName)
	}
	u, err := url.Parse(cluster.Server)
	if err != nil {
		return nil, err
	}
	if i := strings.Index(u.Path, "/clusters/"); i >= 0 {
		u.Path = u.Path[:i]
	}
	t := &Tessera{URL: strings.TrimSuffix(u.String(), "/"), Kubeconfig: kubeconfig, Context: ctxName, env: e}
	if tok := os.Getenv("TESSERA_E2E_USER_TOKEN"); tok != "" {
		if err := t.writeUserKubeconfig(tok); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// writeUserKubeconfig writes a kubeconfig for the installation that
// authenticates with a bearer token only.
func (t *Tessera) writeUserKubeconfig(token string) error {
	raw, err := clientcmd.LoadFromFile(t.Kubeconfig)
	if err != nil {
		return err
	}
	src := raw.Clusters[raw.Contexts[t.Context].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["tessera"] = &clientcmdapi.Cluster{
		Server: t.URL, CertificateAuthority: src.CertificateAuthority, CertificateAuthorityData: src.CertificateAuthorityData,
		InsecureSkipTLSVerify: src.InsecureSkipTLSVerify, TLSServerName: src.TLSServerName,
	}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["base"] = &clientcmdapi.Context{Cluster: "tessera", AuthInfo: "user"}
	cfg.CurrentContext = "base"
	p := filepath.Join(t.env.Dir, "user.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		return err
	}
	t.UserKubeconfig = p
	return nil
}

// ClusterURL is the URL of a logical cluster ("" for the shard base URL,
// "*" for the wildcard).
func (t *Tessera) ClusterURL(cluster string) string {
	if cluster == "" {
		return t.URL
	}
	return t.URL + "/clusters/" + cluster
}

// Config returns an admin client configuration for a logical cluster.
func (t *Tessera) Config(cluster string) (*rest.Config, error) {
	return t.config(t.Kubeconfig, t.Context, cluster)
}

// UserConfig returns the non-admin user's client configuration for a
// logical cluster.
func (t *Tessera) UserConfig(cluster string) (*rest.Config, error) {
	if t.UserKubeconfig == "" {
		return nil, errors.New("this installation has no non-admin user (set TESSERA_E2E_USER_TOKEN)")
	}
	return t.config(t.UserKubeconfig, "base", cluster)
}

func (t *Tessera) config(kubeconfig, context, cluster string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Host = t.ClusterURL(cluster)
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// Client returns an admin typed client for a logical cluster.
func (t *Tessera) Client(cluster string) (kubernetes.Interface, error) {
	cfg, err := t.Config(cluster)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Dynamic returns an admin dynamic client for a logical cluster.
func (t *Tessera) Dynamic(cluster string) (dynamic.Interface, error) {
	cfg, err := t.Config(cluster)
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// Kubectl runs the real kubectl as the admin against a logical cluster
// ("" for the shard base URL).
func (t *Tessera) Kubectl(ctx context.Context, cluster string, args ...string) (string, error) {
	return t.env.Kubectl(ctx, t.Kubeconfig, append([]string{"--context", t.Context, "--server", t.ClusterURL(cluster)}, args...)...)
}

// UserKubectl runs kubectl as the non-admin user against a logical cluster.
func (t *Tessera) UserKubectl(ctx context.Context, cluster string, args ...string) (string, error) {
	if t.UserKubeconfig == "" {
		return "", errors.New("this installation has no non-admin user (set TESSERA_E2E_USER_TOKEN)")
	}
	return t.env.Kubectl(ctx, t.UserKubeconfig, append([]string{"--server", t.ClusterURL(cluster)}, args...)...)
}

// CreateLogicalCluster brings a logical cluster into being the way a shard
// admin does, by creating its LogicalCluster "cluster", and waits until it
// serves its default namespace.
func (t *Tessera) CreateLogicalCluster(ctx context.Context, name string) error {
	dyn, err := t.Dynamic(name)
	if err != nil {
		return err
	}
	lc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1",
		"kind":       "LogicalCluster",
		"metadata":   map[string]any{"name": "cluster"},
	}}
	if _, err := dyn.Resource(LogicalClusters).Create(ctx, lc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating logical cluster %s: %w", name, err)
	}
	client, err := t.Client(name)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("logical cluster %s has no default namespace: %w (last error: %v)", name, err, last)
	}
	return nil
}

// DeleteLogicalCluster deletes a logical cluster, and with it everything in
// it, without waiting.
func (t *Tessera) DeleteLogicalCluster(ctx context.Context, name string) error {
	dyn, err := t.Dynamic(name)
	if err != nil {
		return err
	}
	if err := dyn.Resource(LogicalClusters).Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting logical cluster %s: %w", name, err)
	}
	return nil
}

// repoRoot finds the directory of the main go.mod above the working
// directory (go test runs in the package directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/tessera-dev/tessera\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository root; set TESSERA_E2E_BIN_DIR")
		}
		dir = parent
	}
}
