package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// BinDir returns the directory of the built tessera binaries (tessera,
// kubectl-ws, kubectl-kcp): TESSERA_E2E_BIN_DIR, else <repo>/bin, as `make
// build` writes them.
func BinDir() (string, error) {
	if dir := os.Getenv("TESSERA_E2E_BIN_DIR"); dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// WS runs the real kubectl with the built plugins (kubectl-ws, kubectl-kcp)
// first on PATH, on a kubeconfig of its own that kubectl ws edits, as
// somebody at a terminal does.
type WS struct {
	// Kubeconfig is the copy kubectl and the plugin read and write.
	Kubeconfig string

	path     string
	cacheDir string
}

// newWS checks that the plugins were built and writes cfg as the session's
// kubeconfig, env.Dir/kubectl-ws/<name>.kubeconfig.
func (e *Env) newWS(name string, cfg *clientcmdapi.Config) (*WS, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	for _, plugin := range []string{"kubectl-ws", "kubectl-kcp"} {
		p := filepath.Join(bin, plugin)
		if st, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("the %s plugin (make build, or set TESSERA_E2E_BIN_DIR): %w", plugin, err)
		} else if st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("the %s plugin %s is not an executable file", plugin, p)
		}
	}
	dir := filepath.Join(e.Dir, "kubectl-ws")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, name+".kubeconfig")
	if _, err := os.Stat(p); err == nil {
		return nil, fmt.Errorf("a kubectl ws session %q exists already in %s", name, dir)
	}
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		return nil, err
	}
	return &WS{
		Kubeconfig: p,
		path:       bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		cacheDir:   filepath.Join(e.Dir, "kubectl-cache"),
	}, nil
}

// Kubectl runs kubectl with args (e.g. "ws", "create", "a") and returns its
// combined output; an error carries the output too.
func (w *WS) Kubectl(ctx context.Context, args ...string) (string, error) {
	kubectl, err := KubectlPath()
	if err != nil {
		return "", err
	}
	// The kubeconfig goes in the environment: kubectl finds a plugin only
	// when no flag comes before its name.
	return Run(ctx, w.env(), kubectl, args...)
}

// KubectlOutput runs kubectl like Kubectl but returns its standard output
// alone, what `kubectl ... > file` writes; an error carries the standard
// error too.
func (w *WS) KubectlOutput(ctx context.Context, args ...string) (string, error) {
	kubectl, err := KubectlPath()
	if err != nil {
		return "", err
	}
	return Output(ctx, w.env(), kubectl, args...)
}

func (w *WS) env() []string {
	return []string{"KUBECONFIG=" + w.Kubeconfig, "PATH=" + w.path, "KUBECACHEDIR=" + w.cacheDir}
}

// AdminWS starts a kubectl ws session as the admin on a copy of the
// installation's admin kubeconfig, with the root workspace current. Tessera
// and kcp write their admin kubeconfig that way; when the one of an
// installation someone else runs has another current context, the copy gets
// a context "e2e-root" for root with the credentials of t.Context.
func (t *Tessera) AdminWS(name string) (*WS, error) {
	cfg, err := loadResolved(t.Kubeconfig)
	if err != nil {
		return nil, err
	}
	root := t.ClusterURL("root")
	if cur, ok := cfg.Contexts[cfg.CurrentContext]; !ok || cfg.Clusters[cur.Cluster] == nil || cfg.Clusters[cur.Cluster].Server != root {
		base, ok := cfg.Contexts[t.Context]
		if !ok || cfg.Clusters[base.Cluster] == nil {
			return nil, fmt.Errorf("kubeconfig %s: context %q or its cluster is missing", t.Kubeconfig, t.Context)
		}
		cluster := cfg.Clusters[base.Cluster].DeepCopy()
		cluster.Server = root
		cfg.Clusters["e2e-root"] = cluster
		cfg.Contexts["e2e-root"] = &clientcmdapi.Context{Cluster: "e2e-root", AuthInfo: base.AuthInfo}
		cfg.CurrentContext = "e2e-root"
	}
	return t.env.newWS(name, cfg)
}

// UserWS starts a kubectl ws session as the non-admin user on a copy of
// UserKubeconfig, whose server is the base URL of the installation.
func (t *Tessera) UserWS(name string) (*WS, error) {
	if t.UserKubeconfig == "" {
		return nil, errors.New("this installation has no non-admin user (set TESSERA_E2E_USER_TOKEN)")
	}
	cfg, err := loadResolved(t.UserKubeconfig)
	if err != nil {
		return nil, err
	}
	return t.env.newWS(name, cfg)
}

// loadResolved loads a kubeconfig with its relative file paths made
// absolute, so that a copy elsewhere still finds the files.
func loadResolved(path string) (*clientcmdapi.Config, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, err
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}
