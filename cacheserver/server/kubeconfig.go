package server

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/pkg/fileutil"
)

// KubeconfigPath is where the admin kubeconfig is written:
// <root-directory>/cache.kubeconfig.
func (c *Config) KubeconfigPath() string {
	return filepath.Join(c.Options.RootDirectory, "cache.kubeconfig")
}

// Kubeconfig returns the admin kubeconfig, with the CA, certificate and
// key inline. Its contexts: "base" (the server's URL, for /readyz and the
// like) and "all" (current: shards/*/clusters/*, where every replica can
// be listed and watched). For one shard's and cluster's replicas, use
// --server <ServerURL>/services/cache/shards/<shard>/clusters/<cluster>.
// It fails when the server has no admin certificate (--client-ca-file).
func (c *Config) Kubeconfig() (*clientcmdapi.Config, error) {
	if c.Files.Admin.CertFile == "" {
		return nil, fmt.Errorf("no admin client certificate: the client CA is given (--client-ca-file)")
	}
	cert, err := os.ReadFile(c.Files.Admin.CertFile)
	if err != nil {
		return nil, err
	}
	key, err := os.ReadFile(c.Files.Admin.KeyFile)
	if err != nil {
		return nil, err
	}
	var ca []byte
	if c.Files.CA.CertFile != "" && c.Options.TLSCertFile == "" {
		if ca, err = os.ReadFile(c.Files.CA.CertFile); err != nil {
			return nil, err
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["base"] = &clientcmdapi.Cluster{Server: c.ServerURL, CertificateAuthorityData: ca}
	cfg.Clusters["all"] = &clientcmdapi.Cluster{Server: c.ServerURL + ScopeURL("*", "*"), CertificateAuthorityData: ca}
	cfg.AuthInfos[AdminUser] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["base"] = &clientcmdapi.Context{Cluster: "base", AuthInfo: AdminUser}
	cfg.Contexts["all"] = &clientcmdapi.Context{Cluster: "all", AuthInfo: AdminUser}
	cfg.CurrentContext = "all"
	return cfg, nil
}

// WriteKubeconfig writes the admin kubeconfig to KubeconfigPath and
// returns the path.
func (c *Config) WriteKubeconfig() (string, error) {
	cfg, err := c.Kubeconfig()
	if err != nil {
		return "", err
	}
	p := c.KubeconfigPath()
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	// Whole or not at all: scripts and tests wait for it to appear.
	if err := fileutil.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	return p, nil
}
