// Package server is tessera-virtual-workspaces: the virtual workspaces of
// one shard (apiexport and initializingworkspaces) served by a process of
// their own, with the same handlers a shard serves in-process:
//
//	/services/apiexport/<export workspace>/<export name>/clusters/<*|consumer>/...
//	/services/initializingworkspaces/<initializer>/clusters/<*|name>/...
//
// It is built on k8s.io/apiserver's generic API server (TLS, filter chain,
// /livez, /readyz) and reads the shard only over HTTPS, with the shard
// admin's kubeconfig: wildcard informers of APIExports,
// APIResourceSchemas, APIBindings, LogicalClusters and Workspaces over
// /clusters/*, and requests forwarded by the handlers (virtual/forward).
//
// Authentication: client certificates (--client-ca-file), users a
// front-proxy names in request headers (--requestheader-*), and bearer
// tokens reviewed by the shard (TokenReview at the shard's base URL, in
// its system:admin logical cluster; answers kept briefly). Health paths
// and /version are open to anonymous requests; nothing else is.
//
// Authorization: the handlers authorize their requests themselves in a
// logical cluster (the export's, the WorkspaceType's); standalone, the
// shard decides by SubjectAccessReview in that logical cluster
// (virtual/accessreview). Nothing is started per logical cluster.
//
// A process that embeds the server runs the same chain as the binary:
//
//	o := options.NewOptions()             // and set fields, or AddFlags
//	completed, _ := o.Complete()
//	errs := completed.Validate()
//	cfg, _ := server.NewConfig(completed) // certificates, listener, authn, authz
//	s, _ := cfg.Complete().New()          // informers, handlers, API server
//	err := s.PrepareRun().Run(ctx)        // serves until ctx is done
package server

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/compatibility"

	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/virtual/accessreview"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
	"github.com/tessera-dev/tessera/virtual/options"
	syncervw "github.com/tessera-dev/tessera/virtual/syncer"
)

// KubernetesVersion is the Kubernetes version the server reports.
const KubernetesVersion = "1.37"

// Files are the certificate files the server uses.
type Files struct {
	// CA is the generated certificate authority (empty when
	// --tls-cert-file is given).
	CA certs.Pair
	// Serving is the serving certificate, given or generated.
	Serving certs.Pair
}

// Config is the server's configuration.
type Config struct {
	Options options.CompletedOptions
	Generic *genericapiserver.Config
	// Shard reaches the shard's base URL as its admin.
	Shard *rest.Config
	// Cache reaches the cache server's base URL (--cache-kubeconfig); nil
	// without one.
	Cache *rest.Config
	// Authorizer decides the handlers' questions by SubjectAccessReviews.
	Authorizer *accessreview.Authorizer
	Files      Files
	// ServerURL is https://<external hostname>:<port>, with the port the
	// listener got.
	ServerURL string
}

// NewConfig turns completed options into a configuration: it reads the
// shard's kubeconfig, creates the certificates missing under the root
// directory, opens the listener and assembles authentication and the
// authorizer.
func NewConfig(o options.CompletedOptions) (*Config, error) {
	c := &Config{Options: o}
	shard, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	shard = rest.CopyConfig(shard)
	shard.Host = clusters.ShardHost(shard.Host)
	shard.UserAgent = "tessera-virtual-workspaces/" + o.ShardName
	shard.QPS, shard.Burst = 100, 200
	c.Shard = shard
	if o.CacheKubeconfig != "" {
		var err error
		if c.Cache, err = cacheserver.LoadConfig(o.CacheKubeconfig); err != nil {
			return nil, fmt.Errorf("--cache-kubeconfig: %w", err)
		}
	}
	if err := c.ensureCerts(); err != nil {
		return nil, err
	}

	scheme := runtime.NewScheme()
	gc := genericapiserver.NewConfig(serializer.NewCodecFactory(scheme))
	// Watches end at shutdown instead of holding the process for the whole
	// ShutdownTimeout; their clients watch again.
	gc.ShutdownWatchTerminationGracePeriod = 2 * time.Second
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

	shardClient, err := kubernetes.NewForConfig(shard)
	if err != nil {
		return nil, fmt.Errorf("shard client: %w", err)
	}
	if err := c.authentication(gc, shardClient); err != nil {
		return nil, err
	}
	c.Authorizer, err = accessreview.New(accessreview.Config{
		Client:    shardClient.AuthorizationV1().RESTClient(),
		AllowTTL:  o.AuthorizationAllowTTL,
		DenyTTL:   o.AuthorizationDenyTTL,
		CacheSize: o.AuthorizationCacheSize,
	})
	if err != nil {
		return nil, err
	}
	gc.Authorization.Authorizer = pathAuthorizer()

	gc.EnableDiscovery = false
	gc.EnableIndex = false
	gc.EffectiveVersion = compatibility.NewEffectiveVersionFromString(KubernetesVersion, "", "")
	longRunning := gc.LongRunningFunc
	gc.LongRunningFunc = func(r *http.Request, ri *request.RequestInfo) bool {
		return initializingworkspaces.IsLongRunning(r) || apiexportvw.IsLongRunning(r) || syncervw.IsLongRunning(r) || longRunning(r, ri)
	}
	c.Generic = gc
	return c, nil
}

// authentication assembles request-header, client-certificate and
// delegated token authentication, and anonymous requests for the health
// paths and /version.
func (c *Config) authentication(gc *genericapiserver.Config, shard kubernetes.Interface) error {
	o := c.Options
	ac := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous: &apiserver.AnonymousAuthConfig{Enabled: true, Conditions: []apiserver.AnonymousAuthCondition{
			{Path: "/healthz"}, {Path: "/livez"}, {Path: "/readyz"}, {Path: "/version"},
		}},
		WebhookRetryBackoff: genericoptions.DefaultAuthWebhookRetryBackoff(),
		CacheTTL:            o.TokenCacheTTL,
	}
	if o.TokenReview {
		// Cache audit (issue 9): not cluster-dependent: every token is
		// reviewed in one logical cluster (the shard's system:admin, or
		// that of --authentication-kubeconfig), whatever the request's,
		// so an answer holds for every request.
		ac.TokenAccessReviewClient = shard.AuthenticationV1()
		if o.AuthenticationKubeconfig != "" {
			cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.AuthenticationKubeconfig}, &clientcmd.ConfigOverrides{}).ClientConfig()
			if err != nil {
				return fmt.Errorf("--authentication-kubeconfig: %w", err)
			}
			cfg.UserAgent = c.Shard.UserAgent
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("--authentication-kubeconfig: %w", err)
			}
			ac.TokenAccessReviewClient = client.AuthenticationV1()
		}
	}
	if o.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", o.ClientCAFile)
		if err != nil {
			return fmt.Errorf("--client-ca-file: %w", err)
		}
		if err := gc.Authentication.ApplyClientCert(ca, gc.SecureServing); err != nil {
			return err
		}
		ac.ClientCertificateCAContentProvider = ca
	}
	rh, err := o.RequestHeader.ToAuthenticationRequestHeaderConfig()
	if err != nil {
		return fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	if rh != nil {
		if err := gc.Authentication.ApplyClientCert(rh.CAContentProvider, gc.SecureServing); err != nil {
			return err
		}
		ac.RequestHeaderConfig = rh
		gc.Authentication.RequestHeaderConfig = rh
	}
	authn, _, err := ac.New()
	if err != nil {
		return fmt.Errorf("authentication: %w", err)
	}
	gc.Authentication.Authenticator = authn
	return nil
}

// ensureCerts fills c.Files, creating under <root>/certs a CA and a
// serving certificate signed by it when none is given.
func (c *Config) ensureCerts() error {
	o := c.Options
	c.Files.Serving = certs.Pair{CertFile: o.TLSCertFile, KeyFile: o.TLSPrivateKeyFile}
	if o.TLSCertFile != "" {
		return nil
	}
	dir := filepath.Join(o.RootDirectory, "certs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	c.Files.CA = certs.Pair{CertFile: filepath.Join(dir, "ca.crt"), KeyFile: filepath.Join(dir, "ca.key")}
	ca, caKey, err := certs.EnsureCA(c.Files.CA)
	if err != nil {
		return fmt.Errorf("certificate authority: %w", err)
	}
	c.Files.Serving = certs.Pair{CertFile: filepath.Join(dir, "apiserver.crt"), KeyFile: filepath.Join(dir, "apiserver.key")}
	hosts := sets.New(o.ExternalHostname, "127.0.0.1", "localhost")
	if ip := net.ParseIP(o.BindAddress); ip != nil && !ip.IsUnspecified() {
		hosts.Insert(o.BindAddress)
	}
	if err := certs.EnsureServing(c.Files.Serving, ca, caKey, sets.List(hosts)); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
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
