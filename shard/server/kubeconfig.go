package server

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AdminKubeconfigPath is where the admin kubeconfig is written.
func (c *Config) AdminKubeconfigPath() string {
	return filepath.Join(c.Options.RootDirectory, "admin.kubeconfig")
}

// AdminKubeconfig returns a kubeconfig for the shard admin with kcp's context
// names: root (the root logical cluster, current), base (the shard URL),
// system:admin (the shard-local system:admin cluster) and shard-base.
func (c *Config) AdminKubeconfig() *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cluster := func(server string) *clientcmdapi.Cluster {
		return &clientcmdapi.Cluster{Server: server, CertificateAuthority: c.Certs.CA.CertFile}
	}
	cfg.Clusters["root"] = cluster(c.ServerURL + "/clusters/root")
	cfg.Clusters["base"] = cluster(c.ServerURL)
	cfg.Clusters["system:admin"] = cluster(c.ServerURL)
	cfg.Clusters["shard-base"] = cluster(c.ServerURL)
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: c.Certs.Admin.CertFile, ClientKey: c.Certs.Admin.KeyFile}
	cfg.AuthInfos["shard-admin"] = &clientcmdapi.AuthInfo{ClientCertificate: c.Certs.Admin.CertFile, ClientKey: c.Certs.Admin.KeyFile}
	cfg.Contexts["root"] = &clientcmdapi.Context{Cluster: "root", AuthInfo: "admin"}
	cfg.Contexts["base"] = &clientcmdapi.Context{Cluster: "base", AuthInfo: "admin"}
	cfg.Contexts["system:admin"] = &clientcmdapi.Context{Cluster: "system:admin", AuthInfo: "shard-admin"}
	cfg.Contexts["shard-base"] = &clientcmdapi.Context{Cluster: "shard-base", AuthInfo: "shard-admin"}
	cfg.CurrentContext = "root"
	return cfg
}

// WriteAdminKubeconfig writes the admin kubeconfig and returns its path.
func (s *Server) WriteAdminKubeconfig() (string, error) {
	p := s.AdminKubeconfigPath()
	if err := clientcmd.WriteToFile(*s.AdminKubeconfig(), p); err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	return p, nil
}
