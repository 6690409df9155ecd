// Package server is the cache server: a Kubernetes-style HTTPS API server
// with its own storage that holds the replicas of the objects every shard
// must see (package replicated), under
//
//	/services/cache/shards/<shard|*>/clusters/<cluster|*>/apis/<group>/<version>/<resource>[/<name>]
//
// It is built on k8s.io/apiserver's generic API server (filter chain,
// client-certificate authentication, health checks) and endpoint handlers.
// Only members of system:masters may use it.
//
// The binary tessera-cache-server is a thin wrapper (cacheserver/app); a
// process that embeds the cache server runs the same chain:
//
//	o := options.NewOptions()           // and set fields, or AddFlags
//	completed, _ := o.Complete()
//	errs := completed.Validate()
//	cfg, _ := server.NewConfig(completed) // certificates, listener
//	s, _ := cfg.Complete().New(ctx)       // embedded etcd, storage, cache.kubeconfig
//	err := s.PrepareRun().Run(ctx)        // serves until ctx is done
package server

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tessera-dev/tessera/shard/filters"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/component-base/compatibility"

	"github.com/tessera-dev/tessera/cacheserver/options"
	"github.com/tessera-dev/tessera/cacheserver/replicated"
	"github.com/tessera-dev/tessera/shard/certs"
)

// KubernetesVersion is the Kubernetes version the cache server reports.
const KubernetesVersion = "1.37"

// AdminUser is the user of the generated admin client certificate; its
// group is system:masters.
const AdminUser = "cache-admin"

// Files are the certificate files the cache server uses.
type Files struct {
	// CA is the generated certificate authority (empty when both
	// --tls-cert-file and --client-ca-file are given).
	CA certs.Pair
	// Serving is the serving certificate, given or generated.
	Serving certs.Pair
	// ClientCA verifies client certificates.
	ClientCA string
	// Admin is the generated admin client certificate (group
	// system:masters); empty with --client-ca-file.
	Admin certs.Pair
}

// Config is the cache server's configuration.
type Config struct {
	Options options.CompletedOptions
	Generic *genericapiserver.Config
	// Backend is the etcd configuration; the embedded etcd's address is
	// filled in by New.
	Backend *storagebackend.Config
	Codecs  *replicated.Codecs
	Files   Files
	// ServerURL is https://<external hostname>:<port>, with the port the
	// listener got.
	ServerURL string
}

// NewConfig turns completed options into a configuration: it creates the
// certificates missing under the root directory and opens the listener.
func NewConfig(o options.CompletedOptions) (*Config, error) {
	c := &Config{Options: o, Codecs: replicated.NewCodecs(replicated.Resources())}
	if err := c.ensureCerts(); err != nil {
		return nil, err
	}

	gc := genericapiserver.NewConfig(serializer.NewCodecFactory(c.Codecs.Scheme()))
	serving := genericoptions.NewSecureServingOptions()
	serving.BindAddress = net.ParseIP(o.BindAddress)
	serving.BindPort = o.SecurePort
	if o.SecurePort == 0 {
		// A free port: the generic options would not serve at all.
		ln, port, err := genericoptions.CreateListener("tcp", net.JoinHostPort(o.BindAddress, "0"), net.ListenConfig{})
		if err != nil {
			return nil, fmt.Errorf("secure serving: %w", err)
		}
		serving.Listener, serving.BindPort = ln, port
	}
	serving.ServerCert.CertKey = genericoptions.CertKey{CertFile: c.Files.Serving.CertFile, KeyFile: c.Files.Serving.KeyFile}
	if err := certs.ApplySecureServingWithLoopback(serving, &gc.SecureServing, &gc.LoopbackClientConfig); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}
	port := o.SecurePort
	if addr, ok := gc.SecureServing.Listener.Addr().(*net.TCPAddr); ok {
		port = addr.Port
	}
	gc.ExternalAddress = net.JoinHostPort(o.ExternalHostname, strconv.Itoa(port))
	c.ServerURL = "https://" + gc.ExternalAddress

	clientCA, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", c.Files.ClientCA)
	if err != nil {
		return nil, fmt.Errorf("client CA %s: %w", c.Files.ClientCA, err)
	}
	if err := gc.Authentication.ApplyClientCert(clientCA, gc.SecureServing); err != nil {
		return nil, err
	}
	gc.Authentication.Authenticator = withAuthenticatedGroup(x509.NewDynamic(clientCA.VerifyOptions, x509.CommonNameUserConversion))
	gc.Authorization.Authorizer = mastersOnly()

	// Discovery is the cache server's own, per shard and cluster (see
	// apiHandler); nothing is served at the bare /apis.
	gc.EnableDiscovery = false
	gc.EnableIndex = false
	// Watches (the shards' informers) end at shutdown instead of holding
	// it for the whole ShutdownTimeout; their clients list and watch again.
	gc.ShutdownWatchTerminationGracePeriod = 2 * time.Second
	gc.EffectiveVersion = compatibility.NewEffectiveVersionFromString(KubernetesVersion, "", "")
	gc.BuildHandlerChainFunc = func(h http.Handler, gcfg *genericapiserver.Config) http.Handler {
		return withScope(genericapiserver.DefaultBuildHandlerChain(filters.WithResourceVersionValidation(h, gcfg.Serializer), gcfg))
	}
	c.Generic = gc

	backend := storagebackend.NewDefaultConfig(replicated.StoragePrefix, nil)
	backend.CompactionInterval = 5 * time.Minute
	backend.Transport.ServerList = o.EtcdServers
	backend.Transport.TrustedCAFile = o.EtcdCAFile
	backend.Transport.CertFile = o.EtcdCertFile
	backend.Transport.KeyFile = o.EtcdKeyFile
	c.Backend = backend
	return c, nil
}

// ensureCerts fills c.Files, creating under <root>/certs what the options
// do not give: a CA, a serving certificate signed by it, and, when the CA
// also verifies clients, an admin client certificate.
func (c *Config) ensureCerts() error {
	o := c.Options
	dir := filepath.Join(o.RootDirectory, "certs")
	c.Files.Serving = certs.Pair{CertFile: o.TLSCertFile, KeyFile: o.TLSPrivateKeyFile}
	c.Files.ClientCA = o.ClientCAFile
	if o.TLSCertFile != "" && o.ClientCAFile != "" {
		return nil
	}
	c.Files.CA = certs.Pair{CertFile: filepath.Join(dir, "ca.crt"), KeyFile: filepath.Join(dir, "ca.key")}
	if err := mkdir(dir); err != nil {
		return err
	}
	ca, caKey, err := certs.EnsureCA(c.Files.CA)
	if err != nil {
		return fmt.Errorf("certificate authority: %w", err)
	}
	if o.TLSCertFile == "" {
		c.Files.Serving = certs.Pair{CertFile: filepath.Join(dir, "apiserver.crt"), KeyFile: filepath.Join(dir, "apiserver.key")}
		hosts := sets.New(o.ExternalHostname, "127.0.0.1", "localhost")
		if ip := net.ParseIP(o.BindAddress); ip != nil && !ip.IsUnspecified() {
			hosts.Insert(o.BindAddress)
		}
		if err := certs.EnsureServing(c.Files.Serving, ca, caKey, sets.List(hosts)); err != nil {
			return fmt.Errorf("serving certificate: %w", err)
		}
	}
	if o.ClientCAFile == "" {
		c.Files.ClientCA = c.Files.CA.CertFile
		c.Files.Admin = certs.Pair{CertFile: filepath.Join(dir, "admin.crt"), KeyFile: filepath.Join(dir, "admin.key")}
		if err := certs.EnsureClient(c.Files.Admin, ca, caKey, AdminUser, []string{mastersGroup}); err != nil {
			return fmt.Errorf("admin client certificate: %w", err)
		}
	}
	return nil
}

type completedConfig struct {
	*Config
}

// CompletedConfig can only be made by Complete.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in what the configuration derives.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{c}}
}
