package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestAdminKubeconfigIsSelfContained: as kcp's, the admin kubeconfig
// carries the CA, certificate and key inline, so a copy works elsewhere,
// with kcp's context names.
func TestAdminKubeconfigIsSelfContained(t *testing.T) {
	s := framework.StartShard(t)
	cfg, err := clientcmd.LoadFromFile(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range cfg.Clusters {
		if len(c.CertificateAuthorityData) == 0 || c.CertificateAuthority != "" {
			t.Errorf("cluster %s: CA file %q, %d bytes of CA data; want the data inline", name, c.CertificateAuthority, len(c.CertificateAuthorityData))
		}
	}
	for name, a := range cfg.AuthInfos {
		if len(a.ClientCertificateData) == 0 || len(a.ClientKeyData) == 0 || a.ClientCertificate != "" || a.ClientKey != "" {
			t.Errorf("user %s: certificate and key not inline", name)
		}
	}
	for _, want := range []string{"root", "base", "system:admin", "shard-base"} {
		if cfg.Contexts[want] == nil {
			t.Errorf("no context %q", want)
		}
	}
	if st, err := os.Stat(s.Kubeconfig); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("the admin kubeconfig holds a private key and is readable by others: %v %v", st.Mode(), err)
	}

	copied := filepath.Join(t.TempDir(), "admin.kubeconfig")
	data, err := os.ReadFile(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(framework.KubectlPath(t), "--kubeconfig", copied, "--context", "root", "get", "namespace", "default", "-o", "name").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "namespace/default" {
		t.Errorf("kubectl with a copy of the admin kubeconfig: %v\n%s", err, out)
	}
}

// TestKCPClientFiles: kcp's clients find the serving certificate beside
// admin.kubeconfig, and the root shard by its label name=root with its
// virtual workspace URL.
func TestKCPClientFiles(t *testing.T) {
	s := framework.StartShard(t)
	dir := filepath.Dir(s.Kubeconfig)
	for _, f := range []string{"apiserver.crt", "apiserver.key"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s beside admin.kubeconfig: %v", f, err)
		}
	}
	out := s.MustKubectl(t, "root", "get", "shards", "-l", "name=root", "-o", "jsonpath={.items[*].metadata.name} {.items[*].spec.virtualWorkspaceURL}")
	if out != "root "+s.URL {
		t.Errorf("the root shard by label name=root: %q, want %q", out, "root "+s.URL)
	}
}

// TestKCPAdmin: the root and base contexts are kcp's admin, kcp-admin in
// system:kcp:admin, who administers workspaces through the bootstrap
// policy but is no shard admin; shard-base is.
func TestKCPAdmin(t *testing.T) {
	s := framework.StartShard(t)
	kubectl := func(args ...string) (string, error) {
		out, err := exec.Command(framework.KubectlPath(t), append([]string{"--kubeconfig", s.Kubeconfig}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := kubectl("--context", "root", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	if err != nil || !strings.HasPrefix(out, "kcp-admin ") || !strings.Contains(out, "system:kcp:admin") || strings.Contains(out, "system:masters") {
		t.Errorf("the root context's user: %v %q", err, out)
	}
	if out, err := kubectl("--context", "root", "create", "configmap", "by-kcp-admin"); err != nil {
		t.Errorf("kcp-admin creating in root: %v\n%s", err, out)
	}
	if out, err := kubectl("--context", "base", "get", "--raw", "/clusters/*/api/v1/configmaps"); err == nil {
		t.Errorf("kcp-admin listed across all logical clusters:\n%s", out)
	}
	if out, err := kubectl("--context", "shard-base", "get", "--raw", "/clusters/*/api/v1/configmaps"); err != nil || !strings.Contains(out, "by-kcp-admin") {
		t.Errorf("the shard admin listing across all logical clusters: %v\n%s", err, out)
	}
}
