package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The switches here go to root or back with -, which need no server.

func TestSwitchAndSwapContexts(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ca.crt", "not read by a switch to root\n")
	kc := writeFile(t, dir, "kubeconfig", `apiVersion: v1
kind: Config
current-context: org
clusters:
- name: kcp
  cluster:
    server: https://kcp.example:6443/clusters/root:org
    certificate-authority: ca.crt
    tls-server-name: kcp.internal
- name: other
  cluster:
    server: https://other.example:6443/clusters/root:other
contexts:
- name: org
  context:
    cluster: kcp
    user: alice
    namespace: team-ns
- name: elsewhere
  context:
    cluster: other
    user: bob
users:
- name: alice
  user:
    token: alice-token
- name: bob
  user:
    token: bob-token
`)

	runSteps(t, kc, []step{{args: []string{"root"}, out: "Current workspace is \"root\".\n"}})

	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != CurrentContextName {
		t.Fatalf("current-context %q, want %q", cfg.CurrentContext, CurrentContextName)
	}
	cur, prev := cfg.Contexts[CurrentContextName], cfg.Contexts[PreviousContextName]
	if cur == nil || prev == nil {
		t.Fatalf("contexts missing: %v", cfg.Contexts)
	}
	if cur.Cluster != CurrentContextName || prev.Cluster != PreviousContextName {
		t.Errorf("contexts use clusters %q and %q, want their own names", cur.Cluster, prev.Cluster)
	}
	if cur.AuthInfo != "alice" || prev.AuthInfo != "alice" || cur.Namespace != "team-ns" {
		t.Errorf("contexts are %+v and %+v, want user alice and namespace team-ns kept", cur, prev)
	}
	curCluster, prevCluster := cfg.Clusters[CurrentContextName], cfg.Clusters[PreviousContextName]
	if curCluster.Server != "https://kcp.example:6443/clusters/root" {
		t.Errorf("current server %q", curCluster.Server)
	}
	if prevCluster.Server != "https://kcp.example:6443/clusters/root:org" {
		t.Errorf("previous server %q", prevCluster.Server)
	}
	// The CA file is kept, relative to the kubeconfig as it was written
	// (LoadFromFile does not resolve paths).
	for name, c := range map[string]string{"current": curCluster.CertificateAuthority, "previous": prevCluster.CertificateAuthority} {
		if c != "ca.crt" {
			t.Errorf("%s cluster has CA %q, want ca.crt", name, c)
		}
	}
	if curCluster.TLSServerName != "kcp.internal" {
		t.Errorf("TLS server name %q not kept", curCluster.TLSServerName)
	}
	if raw := readFile(t, kc); strings.Contains(raw, dir) {
		t.Errorf("the CA path was written absolute:\n%s", raw)
	}
	if cfg.Clusters["kcp"].Server != "https://kcp.example:6443/clusters/root:org" {
		t.Errorf("the original cluster was changed to %q", cfg.Clusters["kcp"].Server)
	}

	// - swaps, twice.
	runSteps(t, kc, []step{
		{args: []string{"-"}, out: "Current workspace is \"root:org\".\n"},
		{args: []string{"-"}, out: "Current workspace is \"root\".\n"},
		{args: []string{"-"}, out: "Current workspace is \"root:org\".\n"},
	})
	cfg, err = clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters[CurrentContextName].Server; got != "https://kcp.example:6443/clusters/root:org" {
		t.Errorf("after swaps the current server is %q", got)
	}
	if got := cfg.Clusters[PreviousContextName].Server; got != "https://kcp.example:6443/clusters/root" {
		t.Errorf("after swaps the previous server is %q", got)
	}

	// Starting from another context with --context makes it the previous one.
	runSteps(t, kc, []step{{args: []string{"root", "--context", "elsewhere"}, out: "Current workspace is \"root\".\n"}})
	cfg, err = clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters[CurrentContextName].Server; got != "https://other.example:6443/clusters/root" {
		t.Errorf("current server %q, want the other base", got)
	}
	if prev := cfg.Contexts[PreviousContextName]; prev.AuthInfo != "bob" || cfg.Clusters[prev.Cluster].Server != "https://other.example:6443/clusters/root:other" {
		t.Errorf("previous context %+v does not point at the starting context", prev)
	}
	if cfg.Contexts[CurrentContextName].AuthInfo != "bob" {
		t.Errorf("current context user %q, want bob", cfg.Contexts[CurrentContextName].AuthInfo)
	}
}

func TestMultiFileKubeconfig(t *testing.T) {
	dir := t.TempDir()
	main := writeFile(t, dir, "main.yaml", `apiVersion: v1
kind: Config
current-context: kcp
clusters:
- name: kcp
  cluster:
    server: https://kcp.example:6443/clusters/root:a
contexts:
- name: kcp
  context:
    cluster: kcp
    user: admin
`)
	const usersContent = `apiVersion: v1
kind: Config
users:
- name: admin
  user:
    token: secret
`
	users := writeFile(t, dir, "users.yaml", usersContent)
	t.Setenv("KUBECONFIG", main+string(os.PathListSeparator)+users)

	runSteps(t, "", []step{
		{args: []string{"root"}, out: "Current workspace is \"root\".\n"},
		{args: []string{"-"}, out: "Current workspace is \"root:a\".\n"},
		{args: []string{"."}, out: "Current workspace is \"root:a\".\n"},
	})
	if got := readFile(t, users); got != usersContent {
		t.Errorf("the users file was changed:\n%s", got)
	}
	cfg, err := clientcmd.LoadFromFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != CurrentContextName || cfg.Contexts[CurrentContextName] == nil || cfg.Clusters[PreviousContextName] == nil {
		t.Errorf("the first file does not hold the workspace contexts:\n%s", readFile(t, main))
	}

	// Workspace entries that already live in a later file are updated
	// there, not duplicated into the first one.
	dir = t.TempDir()
	main = writeFile(t, dir, "main.yaml", `apiVersion: v1
kind: Config
current-context: kcp
clusters:
- name: kcp
  cluster:
    server: https://kcp.example:6443/clusters/root:a
contexts:
- name: kcp
  context:
    cluster: kcp
    user: admin
users:
- name: admin
  user:
    token: secret
`)
	ws := writeFile(t, dir, "ws.yaml", `apiVersion: v1
kind: Config
clusters:
- name: workspace.kcp.io/current
  cluster:
    server: https://kcp.example:6443/clusters/root:old
contexts:
- name: workspace.kcp.io/current
  context:
    cluster: workspace.kcp.io/current
    user: admin
`)
	t.Setenv("KUBECONFIG", main+string(os.PathListSeparator)+ws)
	runSteps(t, "", []step{{args: []string{"root"}, out: "Current workspace is \"root\".\n"}})

	mainCfg, err := clientcmd.LoadFromFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mainCfg.Clusters[CurrentContextName]; ok {
		t.Errorf("the current workspace cluster was copied into the first file")
	}
	if mainCfg.CurrentContext != CurrentContextName {
		t.Errorf("current-context in the first file is %q", mainCfg.CurrentContext)
	}
	wsCfg, err := clientcmd.LoadFromFile(ws)
	if err != nil {
		t.Fatal(err)
	}
	if got := wsCfg.Clusters[CurrentContextName].Server; got != "https://kcp.example:6443/clusters/root" {
		t.Errorf("the current workspace cluster in its own file has server %q", got)
	}
}
