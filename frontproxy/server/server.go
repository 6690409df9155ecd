// Package server assembles the front-proxy from its completed options and
// serves it.
package server

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/frontproxy/options"
	"github.com/tessera-dev/tessera/frontproxy/proxy"
	"github.com/tessera-dev/tessera/frontproxy/resolve"
)

// Config is the assembled front-proxy before it runs.
type Config struct {
	Options  options.CompletedOptions
	Serving  *genericapiserver.SecureServingInfo
	Resolver *resolve.Resolver
	Handler  proxy.Config
	// clientCA reloads --client-ca-file.
	clientCA *dynamiccertificates.DynamicFileCAContent
}

type completedConfig struct {
	*Config
}

// CompletedConfig can only be made by Complete.
type CompletedConfig struct {
	*completedConfig
}

// Server is a front-proxy ready to run.
type Server struct {
	config  CompletedConfig
	handler *proxy.Handler
}

// NewConfig builds the parts of the front-proxy: the listener, the
// authenticator, the transports to the shards and mapped backends, and the
// resolver.
func NewConfig(o options.CompletedOptions) (*Config, error) {
	c := &Config{Options: o}
	if err := o.SecureServing.ApplyTo(&c.Serving); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}

	auth := &proxy.Authentication{DropGroups: o.DropGroups, PassOnGroups: o.PassOnGroups}
	if o.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		c.clientCA = ca
		var authInfo genericapiserver.AuthenticationInfo
		if err := authInfo.ApplyClientCert(ca, c.Serving); err != nil {
			return nil, err
		}
		auth.Certificates = x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion)
	}

	root, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.RootKubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: o.RootKubeconfigContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--root-kubeconfig: %w", err)
	}
	var shards *rest.Config
	if o.ShardsKubeconfig != "" {
		// The server is replaced by each shard's address; an https one
		// makes the CA be loaded.
		shards, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.ShardsKubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: o.ShardsKubeconfigContext, ClusterInfo: clientcmdapi.Cluster{Server: "https://shard.invalid"}}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("--shards-kubeconfig: %w", err)
		}
	}
	for _, cfg := range []*rest.Config{root, shards} {
		if cfg != nil {
			cfg.UserAgent = "tessera-front-proxy"
			cfg.QPS, cfg.Burst = 100, 200
		}
	}
	c.Resolver, err = resolve.New(resolve.Config{Root: root, Shards: shards, CacheSize: o.CacheSize, TTL: o.CacheTTL})
	if err != nil {
		return nil, err
	}

	shardTransports, err := proxy.NewTransports(o.ShardCAFile, o.ShardClientCertFile, o.ShardClientKeyFile)
	if err != nil {
		return nil, fmt.Errorf("transport to the shards: %w", err)
	}
	mappings, err := LoadMappings(o.MappingFile)
	if err != nil {
		return nil, err
	}
	c.Handler = proxy.Config{
		Resolver:       c.Resolver,
		Authentication: auth,
		Shards:         shardTransports,
		ShardHeaders:   proxy.DefaultIdentityHeaders,
		Mappings:       mappings,
		HomeCacheSize:  o.HomeCacheSize,
		HomeCacheTTL:   o.HomeCacheTTL,
	}
	return c, nil
}

// Complete finishes the config.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{c}}
}

// New returns the server.
func (c CompletedConfig) New() *Server {
	return &Server{config: c, handler: proxy.New(c.Handler)}
}

// URL returns the address the proxy serves at.
func (s *Server) URL() string {
	host, port, err := net.SplitHostPort(s.config.Serving.Listener.Addr().String())
	if err != nil {
		return "https://" + s.config.Serving.Listener.Addr().String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	p, _ := strconv.Atoi(port)
	return "https://" + net.JoinHostPort(host, strconv.Itoa(p))
}

// Run resolves and serves until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if s.config.clientCA != nil {
		go s.config.clientCA.Run(ctx, 1)
	}
	go s.config.Resolver.Run(ctx)
	stopped, _, err := s.config.Serving.Serve(s.handler, 30*time.Second, ctx.Done())
	if err != nil {
		return err
	}
	logger.Info("Serving", "url", s.URL())
	<-stopped
	return nil
}

// mapping is an entry of kcp's --mapping-file.
type mapping struct {
	Path              string `json:"path"`
	Backend           string `json:"backend"`
	BackendServerCA   string `json:"backend_server_ca"`
	ProxyClientCert   string `json:"proxy_client_cert"`
	ProxyClientKey    string `json:"proxy_client_key"`
	UserHeader        string `json:"user_header,omitempty"`
	GroupHeader       string `json:"group_header,omitempty"`
	ExtraHeaderPrefix string `json:"extra_header_prefix,omitempty"`
}

// LoadMappings reads the /services/ entries of a mapping file. Entries for
// /clusters/ and / (which kcp's files carry for its shard routing) are
// skipped: shards are found through their Shard objects.
func LoadMappings(file string) ([]proxy.Mapping, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--mapping-file: %w", err)
	}
	defer f.Close()
	var entries []mapping
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&entries); err != nil {
		return nil, fmt.Errorf("--mapping-file %s: %w", file, err)
	}
	var out []proxy.Mapping
	for _, e := range entries {
		if e.Path != "/services" && !strings.HasPrefix(e.Path, "/services/") {
			klog.Background().Info("Skipping a mapping: only /services/ prefixes are mapped, shards are found through their Shard objects", "path", e.Path)
			continue
		}
		backend, err := url.Parse(e.Backend)
		if err != nil || backend.Scheme != "https" || backend.Host == "" {
			return nil, fmt.Errorf("--mapping-file %s: path %q: backend %q is not an absolute https URL", file, e.Path, e.Backend)
		}
		tr, err := proxy.NewTransports(e.BackendServerCA, e.ProxyClientCert, e.ProxyClientKey)
		if err != nil {
			return nil, fmt.Errorf("--mapping-file %s: path %q: %w", file, e.Path, err)
		}
		out = append(out, proxy.Mapping{
			Prefix:     e.Path,
			Backend:    backend,
			Transports: tr,
			Headers:    proxy.IdentityHeaders{User: e.UserHeader, Group: e.GroupHeader, ExtraPrefix: e.ExtraHeaderPrefix},
		})
	}
	return out, nil
}
