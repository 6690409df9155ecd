package server

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/pkg/fileutil"
)

// AdminKubeconfigPath is where the admin kubeconfig is written.
func (c *Config) AdminKubeconfigPath() string {
	return filepath.Join(c.Options.RootDirectory, "admin.kubeconfig")
}

// AdminKubeconfig returns the admin kubeconfig with kcp's context names and
// users: root (the root logical cluster, current) and base (the shard URL)
// as kcp-admin (group system:kcp:admin, cluster-admin everywhere through
// the bootstrap policy), system:admin (the shard-local system:admin
// cluster) and shard-base as the shard admin (system:masters), who alone
// may make requests across all logical clusters and to system clusters. As
// kcp's, it carries the CA and the certificates and keys inline, so it
// works wherever it is copied to.
func (c *Config) AdminKubeconfig() (*clientcmdapi.Config, error) {
	ca, err := os.ReadFile(c.Certs.CA.CertFile)
	if err != nil {
		return nil, err
	}
	cert, err := os.ReadFile(c.Certs.Admin.CertFile)
	if err != nil {
		return nil, err
	}
	key, err := os.ReadFile(c.Certs.Admin.KeyFile)
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cluster := func(server string) *clientcmdapi.Cluster {
		return &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	}
	cfg.Clusters["root"] = cluster(c.ServerURL + "/clusters/root")
	cfg.Clusters["base"] = cluster(c.ServerURL)
	cfg.Clusters["system:admin"] = cluster(c.ServerURL)
	cfg.Clusters["shard-base"] = cluster(c.ServerURL)
	kcpCert, err := os.ReadFile(c.Certs.KCPAdmin.CertFile)
	if err != nil {
		return nil, err
	}
	kcpKey, err := os.ReadFile(c.Certs.KCPAdmin.KeyFile)
	if err != nil {
		return nil, err
	}
	cfg.AuthInfos["kcp-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: kcpCert, ClientKeyData: kcpKey}
	cfg.AuthInfos["shard-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["root"] = &clientcmdapi.Context{Cluster: "root", AuthInfo: "kcp-admin"}
	cfg.Contexts["base"] = &clientcmdapi.Context{Cluster: "base", AuthInfo: "kcp-admin"}
	cfg.Contexts["system:admin"] = &clientcmdapi.Context{Cluster: "system:admin", AuthInfo: "shard-admin"}
	cfg.Contexts["shard-base"] = &clientcmdapi.Context{Cluster: "shard-base", AuthInfo: "shard-admin"}
	cfg.CurrentContext = "root"
	return cfg, nil
}

// WriteAdminKubeconfig writes the admin kubeconfig and returns its path.
func (s *Server) WriteAdminKubeconfig() (string, error) {
	p := s.AdminKubeconfigPath()
	cfg, err := s.AdminKubeconfig()
	if err != nil {
		return "", fmt.Errorf("reading the admin credentials: %w", err)
	}
	// kcp writes the serving certificate beside admin.kubeconfig; scripts
	// written for kcp read it from there. The kubeconfig comes last and
	// whole, as scripts and tests wait for it to appear.
	for _, f := range []struct{ from, to string }{
		{s.Certs.Serving.CertFile, "apiserver.crt"},
		{s.Certs.Serving.KeyFile, "apiserver.key"},
	} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			return "", err
		}
		to := filepath.Join(filepath.Dir(p), f.to)
		if filepath.Clean(to) == filepath.Clean(f.from) {
			continue
		}
		if err := fileutil.WriteFile(to, b, 0o600); err != nil {
			return "", fmt.Errorf("writing %s: %w", to, err)
		}
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	if err := fileutil.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	return p, nil
}
